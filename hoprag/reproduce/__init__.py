"""`hoprag reproduce`: the seed papers' main tables as data, to re-measure them on the user's own model and index."""

from hoprag.reproduce.tables import Cell, Table, load_table, load_tables, row_status, table_ids

__all__ = ["Cell", "Table", "load_table", "load_tables", "row_status", "table_ids"]
