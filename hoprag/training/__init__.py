"""Training code, apart from the inference path: ReaRAG's data construction and fine-tuning, FuRePA's query
scorer. Nothing here runs when a method answers."""
