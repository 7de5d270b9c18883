"""`hoprag report --html`: the page is checked as a person sees it, in headless Chromium (Debian's
chromium and chromium-driver): the table has the runs, the disagreement filter hides agreeing
questions, and clicking an answer opens its trajectory."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hoprag.context import Context
from hoprag.documents import Document
from hoprag.eval.html_report import render_html
from hoprag.eval.runner import run_eval, run_eval_seeds
from hoprag.llm import ScriptedChatModel, register_fake
from hoprag.nodes.retrieve import register_retriever

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


class Pages:
    def search(self, query, k):
        return [Document(id="p1", title="Rush (band)", text="Rush is a Canadian rock band."),
                Document(id="p2", title="Toronto", text="Toronto is a city.")][:k]


def make_runs(tmp_path: Path) -> list[Path]:
    """Two runs over three questions: they agree on q0 (right) and q2 (wrong), disagree on q1."""
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"q{i}", "question": f"Question {i}?", "answers": [f"ans{i}"]})
                              for i in range(3)))
    register_retriever("html-index", Pages())

    def renact_model(messages):
        prompt = "\n".join(str(m.content) for m in messages)
        if "Extract relevant" in prompt:
            return "YES#Rush is Canadian." if "Rush" in prompt.split("Query:")[0] else "NO#"
        number = prompt.split("Question: Question ")[-1].split("?")[0]
        answer = {"0": "ans0", "1": "ans1", "2": "nope"}[number]
        searched = str(messages[-1].content).startswith("Observation")
        return f"Thought: done\nAction: finish[{answer}]" if searched else "Thought: look\nAction: search[Rush; band]"

    def rag_model(messages):
        prompt = str(messages[-1].content)
        return {"0": "ans0", "1": "wrong", "2": "nope"}[prompt.split("Question: Question ")[-1].split("?")[0]]

    runs = []
    for name, method, model in (("renact-run", "renact", renact_model), ("rag-run", "rag", rag_model)):
        spec = register_fake(f"fake:html-{name}", ScriptedChatModel(model))
        run_eval(method, f"jsonl:{data}", tmp_path / name, Context(llm=spec, index="html-index"), progress=False)
        runs.append(tmp_path / name)
    return runs


def test_report_html_cli_writes_a_self_contained_page(tmp_path):
    runs = make_runs(tmp_path)
    page = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "hoprag.cli", "report", *map(str, runs), "--html", str(page),
                           "--plots", str(tmp_path / "plots")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert "<svg" in text and "<link" not in text  # inline plots and styles
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # nothing fetched from a network


def one_question(tmp_path: Path) -> Path:
    """A one-question dataset ("Question 0?", answer ans0) over the two-page index."""
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "q0", "question": "Question 0?", "answers": ["ans0"]}))
    register_retriever("html-index", Pages())
    return data


def test_a_multi_seed_run_gives_one_answer_column_per_seed(tmp_path):
    data = one_question(tmp_path)
    spec = register_fake("fake:html-seeds", ScriptedChatModel(lambda m: "ans0"))
    run_eval_seeds("rag", f"jsonl:{data}", tmp_path / "rag-seeds", Context(llm=spec, index="html-index"), 2,
                   progress=False)
    page = render_html([tmp_path / "rag-seeds"])
    assert "<th>rag-seeds/seed-0</th><th>rag-seeds/seed-1</th>" in page and page.count('class="answer right"') == 2


@pytest.fixture
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("no headless browser: apt-get install chromium chromium-driver (Debian) to run this test")
    webdriver = pytest.importorskip("selenium.webdriver", reason="pip install selenium (the dev extra)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def test_the_page_in_a_real_browser(tmp_path, browser):
    from selenium.webdriver.common.by import By

    from hoprag.eval.html_report import write_html

    page = write_html(make_runs(tmp_path), tmp_path / "report.html")
    browser.get(page.as_uri())
    # The comparison table shows both runs with their methods.
    rows = browser.find_elements(By.CSS_SELECTOR, "#comparison tbody tr")
    assert [r.find_elements(By.TAG_NAME, "td")[0].text for r in rows] == ["renact-run", "rag-run"]
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows] == ["renact", "rag"]

    def visible_questions() -> list[str]:
        return [r.find_element(By.TAG_NAME, "td").text for r in browser.find_elements(By.CSS_SELECTOR, "tr.question")
                if r.is_displayed()]

    assert visible_questions() == ["Question 0?", "Question 1?", "Question 2?"]
    browser.find_element(By.ID, "only-disagree").click()
    assert visible_questions() == ["Question 1?"]  # the runs agree on 0 (right) and 2 (wrong)
    assert browser.find_element(By.ID, "shown-count").text == "1"
    # Clicking ReNAct's answer opens its trajectory: thought, query, retrieved titles, YES and NO notes.
    cell = browser.find_elements(By.CSS_SELECTOR, "tr.question")[1].find_elements(By.CSS_SELECTOR, "td.answer")[0]
    panel = browser.find_element(By.ID, cell.get_attribute("data-target"))
    assert not panel.is_displayed()
    cell.click()
    assert panel.is_displayed()
    text = panel.text
    assert "Thought look" in text and "search[Rush; band]" in text and "Rush (band), Toronto" in text
    assert "YES Rush (band): Rush is Canadian." in text and "NO Toronto" in text
    assert "LLM calls" in text and "tokens" in text  # per-step usage
    cell.click()
    assert not panel.is_displayed()
    browser.find_element(By.ID, "only-disagree").click()
    assert len(visible_questions()) == 3
    browser.save_screenshot(str(tmp_path / "report.png"))


def check_page(browser, page, runs: list[Path]) -> dict:
    """What a person sees on any report page: every run in the table, the filter leaves exactly the
    questions where the runs disagree, and a click on an answer opens its trajectory."""
    from selenium.webdriver.common.by import By

    from hoprag.eval.html_report import _records, is_correct

    browser.get(page.as_uri())
    names = [r.find_elements(By.TAG_NAME, "td")[0].text for r in browser.find_elements(By.CSS_SELECTOR, "#comparison tbody tr")]
    assert names == [p.name for p in runs]
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.question")
    by_run = [{r["id"]: r for r in _records(p)} for p in runs]
    ids = list(dict.fromkeys(i for records in by_run for i in records))
    disagree = sum(1 for i in ids if len({is_correct(records[i]) for records in by_run if i in records}) > 1)
    assert len(rows) == len(ids) and all(r.is_displayed() for r in rows)
    browser.find_element(By.ID, "only-disagree").click()
    assert sum(r.is_displayed() for r in rows) == disagree
    browser.find_element(By.ID, "only-disagree").click()
    cell = rows[0].find_elements(By.CSS_SELECTOR, "td.answer")[0]
    cell.click()
    panel = browser.find_element(By.ID, cell.get_attribute("data-target"))
    assert panel.is_displayed() and "Step 1" in panel.text
    return {"runs": len(runs), "questions": len(ids), "disagree": disagree}


@pytest.mark.skipif(not __import__("os").environ.get("HOPRAG_REPORT_RUNS"),
                    reason="set HOPRAG_REPORT_RUNS to run folders (space-separated) to check their report page")
def test_the_page_of_recorded_runs(tmp_path, browser):
    """The page of real runs, e.g. the benchmark runs behind docs/results.md."""
    import os

    from hoprag.eval.html_report import write_html

    runs = [Path(p) for p in os.environ["HOPRAG_REPORT_RUNS"].split()]
    page = write_html(runs, tmp_path / "report.html")
    print(check_page(browser, page, runs))


def test_the_reply_a_cap_synthesis_was_read_from_is_shown(tmp_path):
    data = one_question(tmp_path)

    def model(messages):  # searches until the cap; the synthesis echoes its prompt's header first
        if "step limit" in str(messages[-1].content):
            return "Collected notes:\nAnswer: ans0"
        return "YES#Rush is Canadian." if "Extract relevant" in str(messages[-1].content) else "Action: search[Rush; band]"

    spec = register_fake("fake:html-cap", ScriptedChatModel(model))
    run_eval("renact", f"jsonl:{data}", tmp_path / "cap", Context(llm=spec, index="html-index", max_steps=2),
             progress=False)
    page = render_html([tmp_path / "cap"])
    assert 'class="answer right"' in page and "Read from the reply: <q>Collected notes:" in page


def test_the_comparison_tables_fit_the_page_width_in_a_real_browser(tmp_path, browser):
    """Their columns used to run off the right edge: every comparison table ends inside the window, which does
    not scroll sideways."""
    from hoprag.eval.html_report import write_html

    from .test_report_shared_questions import thirty_and_twenty

    page = write_html(thirty_and_twenty(tmp_path), tmp_path / "report.html")
    browser.set_window_size(1000, 900)
    browser.get(page.as_uri())
    width = browser.execute_script("return document.documentElement.clientWidth")
    for table_id in ("comparison", "comparison-all"):
        right = browser.execute_script(f"return document.getElementById('{table_id}').getBoundingClientRect().right")
        assert right <= width, (table_id, right, width)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= width
