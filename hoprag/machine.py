"""The machine a run's answers came from, as one line recorded with each evaluated question.

llama.cpp picks its kernels by the CPU's vector instructions, and their arithmetic can differ in the last bits: on a
2-core AMD machine with AVX2 and no AVX-512, greedy decoding chose other tokens for the same prompts than on the faster
machine of earlier runs, whose CPU was not recorded (BENCHMARKS.md, 2Wiki's ReNAct over seeds). Seeds compared as a
spread must then come from one kind of machine, which the record says. `hoprag eval` records it for a model run in its
own process (the embedded one); a served model's machine is not known to it.
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


def describe_machine(cpuinfo: str, architecture: str, llama_version: str | None) -> str:
    """`x86_64 · AMD EPYC · avx avx2 f16c fma · llama-cpp-python 0.3.36` from the text of /proc/cpuinfo (empty
    where there is none: the CPU is then named by `platform` and its features are unknown)."""
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
    return describe_machine(cpuinfo, platform.machine(), llama_version)
