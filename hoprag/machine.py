"""The machine a run's answers came from, as one line recorded with each evaluated question.

llama.cpp picks its kernels by the CPU's vector instructions, and their arithmetic can differ in the last bits: on a
2-core AMD machine with AVX2 and no AVX-512, greedy decoding chose other tokens for the same prompts than on the faster
machine of earlier runs, whose CPU was not recorded (BENCHMARKS.md, 2Wiki's ReNAct over seeds). Seeds compared as a
spread must then come from one kind of machine, which the record says. `hoprag eval` records it for a model run in its
own process (the embedded one); a served model's machine is not known to it. The CPU's features and the llama.cpp
build's are both named: a prebuilt wheel may leave out kernels the CPU has (or a build may not be for this CPU), and the
build's set is what decides the arithmetic; on macOS and Windows, which have no /proc/cpuinfo, it is the only one.
"""

from __future__ import annotations

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
    """`AVX AVX2 F16C FMA ...`: what llama.cpp's `llama_print_system_info` says the build uses (`NAME = 1`), sorted."""
    found = set()
    for item in system_info.split("|"):
        name, _, value = item.rpartition(":")[2].partition("=")
        if value.strip() == "1" and name.strip():
            found.add(name.strip())
    return " ".join(sorted(found))


def describe_machine(cpuinfo: str, architecture: str, llama_version: str | None, llama_build: str = "") -> str:
    """`x86_64 · AMD EPYC · avx avx2 f16c fma · llama-cpp-python 0.3.36 (build: AVX AVX2 F16C FMA)` from the text of
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
    if llama_version:
        try:  # loads the library (the embedded model would anyway); a broken install only loses the build's part
            import llama_cpp

            llama_build = build_features(llama_cpp.llama_print_system_info().decode(errors="replace"))
        except Exception:  # noqa: BLE001  (ImportError, OSError from ctypes, a renamed function)
            llama_build = ""
    return describe_machine(cpuinfo, platform.machine(), llama_version, llama_build)
