"""`hoprag eval --config FILE`: the eval command's flags read from a TOML file, or from a finished run's summary.json.

A TOML file's keys are the flags' names with underscores (`max_steps`, `llm_cache`, `out`), and `[option]` is a
table of Context options (what `--option KEY=VALUE` sets). A summary.json's recorded `config` is read as the same
keys, so `hoprag eval --config runs/x/summary.json --out runs/y` runs x's configuration again. Flags given on the
command line win over the file; the file's `[option]` entries are merged with `--option` (which win per key).
"""

from __future__ import annotations

import json
import tomllib
import typing
from pathlib import Path
from typing import Any

from hoprag.context import METHOD_ROLES, Context
from hoprag.errors import HopragError
from hoprag.presets import preset_options

OPTION_KEY = "option"  # the table of Context options
# What a run records that does not decide its answers, or that the other recorded keys already say: not read back.
RECORDED_ONLY = {"dataset_identity", "retrieval", "preset_options", "git_commit", "machine", "finished",
                 "seed_runs"}
# What a run records under its flags' own names (the rest are Context options, the models, the judge, the seeds).
RECORDED_FLAGS = {"method", "dataset", "limit", "questions", "concurrency"}
# A summary.json's options that its preset set (not read as a key): a --preset given with it decides them anew.
PRESET_SET_KEY = "__set_by_preset"


def flag_key(param: Any) -> str:
    """A command parameter's key in a config file: its longest flag, without dashes (`--max-steps` is max_steps)."""
    return max(param.opts, key=len).lstrip("-").replace("-", "_")


def read_config_file(path: Path) -> dict[str, Any]:
    """The keys of a config file: a TOML file as written, a summary.json (`.json`) as the keys of its config."""
    try:
        text = path.read_text()
    except OSError as error:
        raise HopragError(f"--config {path}: cannot read it ({error.strerror or error})") from None
    if path.suffix == ".json":
        try:
            summary = json.loads(text)
        except json.JSONDecodeError as error:
            raise HopragError(f"--config {path}: not valid JSON ({error}); give a TOML file or a run's summary.json") \
                from None
        config = summary.get("config") if isinstance(summary, dict) else None
        if not isinstance(config, dict):
            raise HopragError(f"--config {path}: not a summary.json of hoprag eval (it has no config); give a TOML "
                              "file or a run's summary.json")
        return keys_of_recorded_run(config, path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise HopragError(f"--config {path}: not valid TOML ({error})") from None


def keys_of_recorded_run(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """A run's recorded config (summary.json's `config`) as config-file keys: the models by role, the judge, the
    seeds, the auto index as `auto`, and every recorded Context option (preset-resolved) in the option table, with
    the names of those its preset had set (PRESET_SET_KEY); an `auto` that searched a server as the server's URL."""
    from hoprag.eval.runner import BEFORE_RECORDED
    from hoprag.retrievers.http import is_url

    context_fields = set(typing.get_type_hints(Context))
    keys: dict[str, Any] = {}
    options: dict[str, Any] = {k: v for k, v in BEFORE_RECORDED.items() if k not in config}
    # What the preset set: as recorded, else (a run from before presets were recorded) as this version's preset
    # has it. An option the run set to its preset's own value counts as the preset's: the record cannot tell.
    from_preset = config.get("preset_options")
    if not isinstance(from_preset, dict):
        try:
            from_preset = preset_options(str(config.get("preset")), config.get("method"))
        except HopragError:
            from_preset = {}
    keys[PRESET_SET_KEY] = {k for k, v in from_preset.items() if config.get(k) == v} | set(options)
    for key, value in config.items():
        if key in RECORDED_ONLY or value is None:
            continue
        if key == "retriever" and value == "auto" and is_url(str(config.get("retrieval") or "")):
            options[key] = config["retrieval"]  # auto searched HOPRAG_RETRIEVER_URL's server: search it again
            continue
        if key == "models" and isinstance(value, dict):
            keys.update({f"{role}_llm": spec for role, spec in value.items() if role in METHOD_ROLES and spec})
        elif key == "eval_judge":
            keys["judge"] = value
        elif key == "seeds" and isinstance(value, list) and value:  # a --seeds run: its first seed and how many
            if value != list(range(value[0], value[0] + len(value))):
                raise HopragError(f"--config {path}: the merged seeds {value} are not consecutive; give one seed's "
                                  "summary.json (its seed-N folder) instead")
            keys.update(seed=value[0], seeds=len(value))
        elif key == "index" and isinstance(value, str):
            # the dataset's own closed-corpus index is named by its content: auto builds it again
            keys["index"] = "auto" if value.startswith("auto-") else value
        elif key in context_fields:
            options[key] = value
        elif key in RECORDED_FLAGS:
            keys[key] = value
        elif isinstance(value, dict | list) or value:
            raise HopragError(f"--config {path}: the run had {key}={value!r}, an option this version of hoprag does "
                              "not have; it cannot be reproduced here")
        # else: an option an earlier version had, recorded off (False, 0): off is the behaviour this version has
    return {**keys, OPTION_KEY: options}


def option_pairs(table: Any, path: Path) -> list[str]:
    """The `[option]` table as `--option KEY=VALUE` pairs (parse_options reads them by each field's type)."""
    if not isinstance(table, dict):
        # no square brackets in the line: the console would read them as markup
        raise HopragError(f"--config {path}: {OPTION_KEY} must be a table of Context options (an {OPTION_KEY} table "
                          "header, then lines like grounded_notes = false)")
    return [f"{key}={str(value).lower() if isinstance(value, bool) else value}" for key, value in table.items()
            if value is not None]


def apply_config_file(path: Path, click_ctx: Any, given: dict[str, Any]) -> dict[str, Any]:
    """`given` (the command's parameters by name) with the file's values for every flag not given on the command
    line; `--option` pairs after the file's, so they win. Unknown keys and bad values: one HopragError line."""
    import difflib

    params = {flag_key(p): p for p in click_ctx.command.params if p.name in given}
    values = read_config_file(path)
    set_by_preset = values.pop(PRESET_SET_KEY) if path.suffix == ".json" else set()  # a TOML file has none
    unknown = sorted(set(values) - set(params))
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(params), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise HopragError(f"--config {path}: unknown key {unknown[0]!r}{hint}; the keys are the hoprag eval flags with "
                          f"underscores ({', '.join(sorted(params))}), Context options in the {OPTION_KEY} table")
    def on_command_line(key: str) -> bool:
        source = click_ctx.get_parameter_source(params[key].name) if key in params else None
        return source is not None and source.name == "COMMANDLINE"

    merged = dict(given)
    for key, value in values.items():
        param = params[key]
        if key == OPTION_KEY:
            # An option that is also a flag (k, preset, max_steps, ... as a summary.json records them): the flag
            # wins. A --preset given with a summary.json: the options the recorded preset set come from the new one.
            if isinstance(value, dict):  # anything else is refused by option_pairs
                renewed = set_by_preset if on_command_line("preset") else set()
                value = {k: v for k, v in value.items()
                         if k not in renewed and not on_command_line(str(k).replace("-", "_"))}
            merged[param.name] = option_pairs(value, path) + list(given.get(param.name) or [])
            continue
        if on_command_line(key):
            continue  # the flag wins over the file
        try:
            merged[param.name] = param.process_value(click_ctx, value)
        except Exception as error:  # click's BadParameter: its message says what the flag takes
            message = error.format_message() if hasattr(error, "format_message") else str(error)
            raise HopragError(f"--config {path}: {key} = {value!r}: {message}") from None
    return merged
