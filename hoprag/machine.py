"""The machine a run's answers came from, as one line recorded with each evaluated question.

llama.cpp picks its kernels by the CPU's vector instructions, and their arithmetic can differ in the last bits: on a
2-core AMD machine with AVX2 and no AVX-512, greedy decoding chose other tokens for the same prompts than on the faster
machine of earlier runs, whose CPU was not recorded. Seeds compared as a
spread must then come from one kind of machine, which the record says. `hoprag eval` records it for a model run in its
own process (the embedded one); a served model's machine is not known to it. The CPU's features and the llama.cpp
build's options are both named: a prebuilt wheel may leave out kernels the CPU has (or a build may not be for this
CPU), and the build's options choose the code paths; on macOS and Windows, which have no /proc/cpuinfo, they are the
only features named. (Lines recorded before the build's options were added end at the version, as does the line of a
machine whose llama_cpp cannot be imported, so such a line and a newer one of the same machine read as two machines.)
"""

from __future__ import annotations

import contextlib
import functools
import platform
from importlib import metadata
from pathlib import Path

# The CPU's vector features that llama.cpp's kernels are built for, as /proc/cpuinfo names them (x86 flags, ARM
# features). They are the CPU's, not what a build compiled in: a native build (the README's) uses what the CPU has.
KERNEL_FEATURES = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl",
                   "avx512vbmi", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16", "asimd", "asimddp",
                   "asimdhp", "i8mm", "sve", "sve2", "bf16")


def build_features(system_info: str) -> str:
    """`CPU AVX AVX2 F16C FMA ...; CUDA ARCHS=890 USE_GRAPHS`: what llama.cpp's `llama_print_system_info` reports as
    on, by backend section (`CPU : SSE3 = 1 | AVX = 1 | ...`), names sorted in each; an option `= 1` is named, one
    with another non-zero value is named with it, one `= 0` is left out. Options that are not CPU features (OPENMP,
    REPACK, LLAMAFILE) are kept too: they choose code paths as well."""
    sections: dict[str, set[str]] = {}
    section = ""  # the old format names no section
    for item in system_info.split("|"):
        head, colon, rest = item.partition(":")
        if colon and "=" not in head:  # `CPU : SSE3 = 1` opens a section
            section, item = head.strip(), rest
        name, _, value = (part.strip() for part in item.partition("="))
        if name and value and value != "0":
            sections.setdefault(section, set()).add(name if value == "1" else f"{name}={value}")
    return "; ".join(" ".join([section, *sorted(names)]).strip() for section, names in sections.items())


def describe_machine(cpuinfo: str, architecture: str, llama_version: str | None, llama_build: str = "") -> str:
    """`x86_64 · AMD EPYC · avx avx2 f16c fma · llama-cpp-python 0.3.36 (build: CPU AVX AVX2 F16C FMA)` from the text of
    /proc/cpuinfo (empty where there is none: the CPU is then named by `platform` and its features are unknown) and
    the build's features (`build_features`; empty where they could not be read)."""
    model, features, arm_part = "", set(), {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in {"model name", "cpu model", "hardware"} and not model:
            model = " ".join(value.split())
        elif key in {"flags", "features"} and not features:
            features = set(value.split())
        elif key in {"cpu implementer", "cpu part"}:  # ARM Linux often names no model: its core's ids do
            arm_part.setdefault(key, value.strip())
    if not model and arm_part:
        model = " ".join(f"{key} {value}" for key, value in arm_part.items())
    kernels = " ".join(sorted(f for f in KERNEL_FEATURES if f in features)) if features else "features unknown"
    runtime = f"llama-cpp-python {llama_version}" if llama_version else "no llama-cpp-python"
    if llama_version and llama_build:
        runtime += f" (build: {llama_build})"
    return " · ".join([architecture or "unknown architecture", model or platform.processor() or "unknown CPU",
                       kernels or "no vector features", runtime])


@functools.cache
def machine_fingerprint() -> str:
    """This machine's line (read once per process)."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        cpuinfo = ""
    try:
        llama_version: str | None = metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        llama_version = None
    llama_build = ""
    # Loads the library (the embedded model would anyway). ImportError, OSError from ctypes or a renamed function
    # only lose the build's part: the line is then the CPU's alone.
    with contextlib.suppress(Exception):
        if llama_version:
            import llama_cpp

            llama_build = build_features(llama_cpp.llama_print_system_info().decode(errors="replace"))
    return describe_machine(cpuinfo, platform.machine(), llama_version, llama_build)
