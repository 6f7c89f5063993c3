from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser

import pytest

from osint_eval.evaluate import evaluate
from osint_eval.policies import OraclePolicy, Policy, RandomGuessPolicy
from osint_eval.report import markdown, write_report
from osint_eval.tasks import load_tasks

HOSTILE = '</script><script>alert("x")</script><img src=x onerror=alert(1)>&amp;<b>bold</b>'


class HostilePolicy(Policy):
    """Answers with markup and script, as a malicious or broken model might."""

    name = "hostile"

    def act(self, batch):
        return [HOSTILE for _ in batch]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    ts = load_tasks("v0:dev", limit=24)
    ts.tasks[0] = type(ts.tasks[0])(**{**ts.tasks[0].__dict__, "question": ts.tasks[0].question + " " + HOSTILE})
    rep = evaluate({"oracle": OraclePolicy(), "guess": RandomGuessPolicy(0), HOSTILE: HostilePolicy()}, ts,
                   comparisons=[("guess", "oracle")], progress=False, title=HOSTILE)
    out = tmp_path_factory.mktemp("report")
    write_report(rep, out)
    return rep, out


def test_report_files_are_written_and_json_is_complete(report):
    rep, out = report
    data = json.loads((out / "report.json").read_text())
    assert data["tasks"]["n"] == 24 and data["config"] == {} and "git_sha" in data and data["versions"]["osint-eval"]
    assert data["dry_run"] is False and len(data["tasks"]["fingerprint"]) == 16
    assert len(data["episodes"]["guess"]) == 24
    md = (out / "report.md").read_text()
    assert "| oracle | 100.0% [86.2, 100.0] (n=24)" in md and "## By difficulty" in md and "McNemar" in md


def test_html_is_self_contained_and_escapes_everything(report):
    rep, out = report
    page = (out / "report.html").read_text()
    assert "<script" not in page and "<img" not in page and "<b>bold</b>" not in page  # no hostile tag survives
    assert "&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "&amp;lt;" not in page  # escaped exactly once (a second pass would turn &lt; into &amp;lt;)
    # nothing is fetched: no external resource of any kind (XML namespace URIs are names, not fetches)
    for fetch in ('src="http', "src='http", 'href="http', "href='http", "url(http", "<link", "@import", "<iframe"):
        assert fetch not in page
    assert page.count("<svg") >= 2 and "<table class=\"summary\">" in page and "<details>" in page
    md = markdown(rep)
    assert "<script" not in md and "<img" not in md  # Markdown renders raw HTML: it is escaped there too


class _Page(HTMLParser):
    """Collects what a browser would load or run, and the text of h1 and the summary table."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.h1 = ""
        self.summary = ""
        self._h1 = self._summary = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self._h1 = self._h1 or tag == "h1"
        self._summary = self._summary or (tag == "table" and ("class", "summary") in attrs)
        self.urls += [
            v for k, v in attrs if k in ("src", "href", "xlink:href", "action", "data") and v and not v.startswith("#")
        ]

    def handle_endtag(self, tag):
        self._h1 = self._h1 and tag != "h1"
        self._summary = self._summary and tag != "table"  # the summary table holds no nested table

    def handle_data(self, data):
        self.h1 += data if self._h1 else ""
        self.summary += data + " " if self._summary else ""


def test_html_parses_as_a_self_contained_page_with_hostile_text_as_text(report):
    rep, out = report
    page = _Page()
    page.feed((out / "report.html").read_text())
    page.close()
    assert page.tags.count("script") == 0 and not {"iframe", "link", "object", "embed", "img"} & set(page.tags)
    assert page.urls == []  # nothing to fetch: no src/href/action at all
    assert page.h1 == f"OSINT-v0 evaluation: {HOSTILE}"  # the hostile title is shown as text, exactly
    assert "oracle" in page.summary and "100.0% [86.2, 100.0] (n=24)" in page.summary
    assert page.tags.count("svg") >= 2 and page.tags.count("details") == 3 * 24


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.mark.browser
def test_html_renders_in_headless_chromium_without_console_errors(report):
    assert CHROMIUM and CHROMEDRIVER, "Debian's chromium and chromium-driver must be installed (.ci/run installs them)"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    rep, out = report
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={out / 'chrome-profile'}",
    ):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        driver.get((out / "report.html").as_uri())
        table = driver.find_element(By.CSS_SELECTOR, "table.summary")
        assert "oracle" in table.text and "n=24" in table.text
        plots = driver.find_elements(By.CSS_SELECTOR, "div.plot svg")
        assert len(plots) >= 2 and all(p.size["width"] > 100 for p in plots)
        assert driver.execute_script("return document.querySelectorAll('script').length") == 0
        assert HOSTILE in driver.find_element(By.TAG_NAME, "h1").text  # shown as text, not run
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
    finally:
        driver.quit()


def test_extend_runs_only_the_new_policies_and_pairs_them_with_the_old(report):
    """A policy added to a finished report (a control trained after the evaluation): only it is run, on
    the report's tasks, and the listed pairs come first, reusing the comparisons already computed."""
    from osint_eval.errors import EvalError
    from osint_eval.evaluate import extend
    from osint_eval.schema import Report

    rep, out = report
    old = Report.from_dict(json.loads((out / "report.json").read_text()))
    ts = load_tasks("v0:dev", limit=24)
    ts.tasks[0] = type(ts.tasks[0])(**{**ts.tasks[0].__dict__, "question": ts.tasks[0].question + " " + HOSTILE})
    calls = []

    class Counting(RandomGuessPolicy):
        def act(self, batch):
            calls.append(len(batch))
            return super().act(batch)

    new = extend(
        old, {"guess2": Counting(1)}, ts, comparisons=[("guess", "guess2"), ("guess", "oracle")], progress=False
    )
    assert sum(calls) == 24 and list(new.models) == [*old.models, "guess2"]
    assert new.episodes["oracle"] == old.episodes["oracle"] and len(new.episodes["guess2"]) == 24
    assert list(new.comparisons) == ["guess2 vs guess", "oracle vs guess"]
    assert new.comparisons["oracle vs guess"] is old.comparisons["oracle vs guess"]  # reused, not recomputed
    c = new.comparisons["guess2 vs guess"].overall
    solved = sum(e.correct for e in new.episodes["guess2"]) - sum(e.correct for e in new.episodes["guess"])
    assert c.n == 24 and c.success_delta.mean == pytest.approx(solved / 24)
    with pytest.raises(EvalError, match="already holds guess"):
        extend(old, {"guess": RandomGuessPolicy(1)}, ts, comparisons=[], progress=False)
    with pytest.raises(EvalError, match="the tasks differ from the report's"):
        extend(old, {"guess3": RandomGuessPolicy(1)}, load_tasks("v0:dev", limit=23), comparisons=[], progress=False)
