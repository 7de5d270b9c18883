"""The generated documentation pages stay fresh, and README keeps what CI runs and what newcomers need."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_cli_reference_page_is_generated_from_the_app() -> None:
    from hoprag.cli_reference import cli_reference_markdown

    page = (ROOT / "docs" / "cli.md").read_text()
    assert page == cli_reference_markdown(), "run: python -m hoprag.cli_reference docs/cli.md"
    assert "## `hoprag eval`" in page and "## `hoprag index build`" in page


def test_every_docs_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[^)#]+)", readme))
    # Every page, each method's included: the method table links each `--method` to its page.
    pages = {str(path.relative_to(ROOT)) for path in (ROOT / "docs").rglob("*.md")}
    assert pages <= linked, f"not linked from README: {sorted(pages - linked)}"
    assert all((ROOT / link).is_file() for link in linked), "README links a docs page that does not exist"


def test_readme_marks_the_blocks_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in ("setup", "test"):
        assert re.search(rf"<!-- ci: {name} -->\n```bash\n.+?\n```", readme, re.S), name
    assert len(readme.splitlines()) <= 250


def test_no_page_names_a_shared_folder_of_this_workplace() -> None:
    for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        assert "../shared" not in path.read_text() or path.name == "results.md", path
