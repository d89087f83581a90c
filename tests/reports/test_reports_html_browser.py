"""The HTML report used the way a reviewer uses it, in a real headless Chromium (WebDriver).

Every test clicks, types or navigates, then checks what is *shown* (WebDriver's visibility, counts
of displayed rows), not only that the page rendered: the status, operator and file filters, the
text search, the file tree, the test view, collapsed survivors, the kill matrix at 1280 px and the
fault-coverage view. Debian's ``chromium`` and ``chromium-driver`` are required (scripts/test.sh
installs them); without them these tests skip and say why.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from testkit.sample_runs import large_run_data, sample_fault_log, sample_run_data

from mutagent.model import RunData, Status
from mutagent.reports.faults import fault_coverage
from mutagent.reports.guards import guard_map
from mutagent.reports.stats import status_of, undetected_mutants
from mutagent.reports.writer import write_reports

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (test extras)")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
DRIVERS = ("chromedriver", "chromium-driver")
EMPTY_FILE = "agent/__init__.py"  # a source without mutants: listed last, folded away


def _which(names: tuple[str, ...]) -> str | None:
    return next((path for path in map(shutil.which, names) if path), None)


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    browser, chromedriver = _which(BROWSERS), _which(DRIVERS)
    if browser is None or chromedriver is None:
        pytest.skip(
            "Chromium and its WebDriver are not installed (apt-get install -y chromium chromium-driver)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1280,900",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing may be fetched: the report is one file
        "--disable-background-networking",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


def sample() -> RunData:
    data = replace(sample_run_data(), faults=sample_fault_log())
    data.sources[EMPTY_FILE] = ""
    return data


def open_report(driver: webdriver.Chrome, tmp_path: Path, data: RunData, fragment: str = "") -> None:
    page = tmp_path / "report.html"
    write_reports(data, html=page)
    driver.get(page.as_uri() + fragment)
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def shown(driver: webdriver.Chrome, selector: str) -> list[WebElement]:
    return [element for element in driver.find_elements(By.CSS_SELECTOR, selector) if element.is_displayed()]


def shown_ids(driver: webdriver.Chrome) -> set[str]:
    return {row.get_attribute("id")[2:] for row in shown(driver, "#mutant-list details.mrow")}


def tab(driver: webdriver.Chrome, name: str) -> None:
    driver.find_element(By.CSS_SELECTOR, f"nav.tabs button[data-tab={name}]").click()


def visible_tabs(driver: webdriver.Chrome) -> list[str]:
    return [section.get_attribute("id") for section in shown(driver, "section.tab")]


def test_status_filter_hides_and_shows_rows(driver, tmp_path):
    data = sample()
    open_report(driver, tmp_path, data)
    assert visible_tabs(driver) == ["mutants"]
    assert shown_ids(driver) == {m.id for m in data.mutants}
    killed = {m.id for m in data.mutants if status_of(data, m) is Status.KILLED}
    driver.find_element(By.CSS_SELECTOR, "input[data-filter=status][value=Killed]").click()
    assert shown_ids(driver) == {m.id for m in data.mutants} - killed
    count = driver.find_element(By.ID, "shown-count").text
    assert count == f"{len(data.mutants) - len(killed)} of {len(data.mutants)} mutants shown"
    for status in ("Timeout", "Ignored", "CompileError", "RuntimeError", "NoCoverage"):
        driver.find_element(By.CSS_SELECTOR, f"input[data-filter=status][value={status}]").click()
    survived = {m.id for m in data.mutants if status_of(data, m) is Status.SURVIVED}
    assert shown_ids(driver) == survived and len(survived) == 2
    driver.find_element(By.ID, "f-clear").click()
    assert len(shown_ids(driver)) == len(data.mutants)


def test_operator_and_file_filters_combine(driver, tmp_path):
    data = sample()
    open_report(driver, tmp_path, data)
    Select(driver.find_element(By.ID, "f-operator")).select_by_value("skip-backoff")
    expected = {m.id for m in data.mutants if m.operator == "skip-backoff"}
    assert shown_ids(driver) == expected and len(expected) == 2
    Select(driver.find_element(By.ID, "f-operator")).select_by_value("")
    Select(driver.find_element(By.ID, "f-file")).select_by_value("agent/tools.py")
    assert shown_ids(driver) == {m.id for m in data.mutants if m.file == "agent/tools.py"}
    Select(driver.find_element(By.ID, "f-operator")).select_by_value("skip-backoff")
    assert shown_ids(driver) == set()  # no skip-backoff mutant in tools.py
    assert driver.find_element(By.ID, "shown-count").text.startswith("0 of ")


def test_text_search_matches_code_description_and_id(driver, tmp_path):
    data = sample()
    open_report(driver, tmp_path, data)
    search = driver.find_element(By.ID, "f-search")
    search.send_keys("MAX_RETRIES")
    expected = {
        m.id
        for m in data.mutants
        if "max_retries" in " ".join((m.description, m.original, m.replacement, m.operator)).lower()
    }
    assert shown_ids(driver) == expected and expected
    search.clear()
    target = data.mutants[3]
    search.send_keys(target.id[:10].upper())  # case does not matter
    assert shown_ids(driver) == {target.id}
    search.clear()
    search.send_keys("no such text anywhere")
    assert shown_ids(driver) == set()


def test_survivors_are_one_line_until_opened(driver, tmp_path):
    data = sample()
    open_report(driver, tmp_path, data)
    survivors = shown(driver, "#survivors details.mrow")
    assert [s.get_attribute("id")[2:] for s in survivors] == [m.id for m in undetected_mutants(data)]
    first = survivors[0]
    assert first.get_attribute("open") is None
    assert not first.find_element(By.CSS_SELECTOR, "pre.diff").is_displayed()
    assert first.size["height"] < 40  # one line
    first.find_element(By.TAG_NAME, "summary").click()
    assert first.find_element(By.CSS_SELECTOR, "pre.diff").is_displayed()
    assert "covered by:" in first.text


def test_file_tree_shows_scores_and_filters_by_file(driver, tmp_path):
    data = sample()
    open_report(driver, tmp_path, data)
    assert shown(driver, ".tree a[data-file]") == []  # folded until opened
    driver.find_element(By.CSS_SELECTOR, ".tree details.dir > summary").click()
    files = shown(driver, ".tree a[data-file]")
    assert [f.get_attribute("data-file") for f in files] == ["agent/loop.py", "agent/tools.py"]
    assert "100.0%" in files[1].text  # tools.py: its one scored mutant is killed
    tab(driver, "guards")
    files[0].click()  # from another view: back to the mutant list, filtered to loop.py
    assert visible_tabs(driver) == ["mutants"]
    assert Select(driver.find_element(By.ID, "f-file")).first_selected_option.get_attribute("value") == (
        "agent/loop.py"
    )
    assert shown_ids(driver) == {m.id for m in data.mutants if m.file == "agent/loop.py"}
    assert "sel" in files[0].get_attribute("class")
    # the file without mutants comes last, folded away
    tree = driver.find_element(By.ID, "tree")
    last = tree.find_elements(By.XPATH, "./*")[-1]
    assert "no-mutants" in last.get_attribute("class")
    assert shown(driver, ".tree .no-mutants li") == []
    last.find_element(By.TAG_NAME, "summary").click()
    assert [li.text for li in shown(driver, ".tree .no-mutants li")] == [EMPTY_FILE]


def test_test_view_lists_kills_sole_guards_and_idle_tests(driver, tmp_path):
    data = sample()
    open_report(driver, tmp_path, data)
    assert shown(driver, "#test-list details.trow") == []
    tab(driver, "guards")
    assert visible_tabs(driver) == ["guards"]
    entries = guard_map(data)
    rows = shown(driver, "#test-list details.trow")
    assert [r.get_attribute("data-test") for r in rows] == [e.test for e in entries]
    driver.find_element(By.ID, "t-idle").click()
    idle = [e.test for e in entries if e.guards_nothing]
    assert [r.get_attribute("data-test") for r in shown(driver, "#test-list details.trow")] == idle
    assert idle and all("guards nothing" in r.text for r in shown(driver, "#test-list details.trow"))
    driver.find_element(By.ID, "t-idle").click()
    sole = next(e for e in entries if e.only)
    driver.find_element(By.ID, "t-search").send_keys(sole.test.rsplit("::", 1)[-1])
    (row,) = shown(driver, "#test-list details.trow")
    row.find_element(By.TAG_NAME, "summary").click()
    items = [li.text for li in row.find_elements(By.TAG_NAME, "li") if li.is_displayed()]
    assert len(items) == len(sole.kills)
    assert sum("(only this test)" in item for item in items) == len(sole.only)
    # a kill links to its mutant: following it opens the mutant in the mutant view
    row.find_element(By.CSS_SELECTOR, "li a").click()
    assert visible_tabs(driver) == ["mutants"]
    opened = driver.find_element(By.ID, f"m-{sole.kills[0].id}")
    assert (
        opened.get_attribute("open") is not None
        and opened.find_element(By.CSS_SELECTOR, "pre.diff").is_displayed()
    )


def test_link_to_a_mutant_opens_it(driver, tmp_path):
    data = sample()
    target = data.mutants[-1]
    open_report(driver, tmp_path, data, f"#m-{target.id}")
    row = driver.find_element(By.ID, f"m-{target.id}")
    assert row.get_attribute("open") is not None
    assert row.find_element(By.CSS_SELECTOR, "pre.diff").is_displayed()


def test_kill_matrix_reads_at_1280_px_with_sticky_headers(driver, tmp_path):
    data = large_run_data(n_tests=80, n_mutants=160)  # more rows than a screen holds
    open_report(driver, tmp_path, data)
    tab(driver, "matrix")
    assert visible_tabs(driver) == ["matrix"]
    blocks = shown(driver, "#matrix details.mxfile")
    assert len(blocks) == len({m.file for m in data.mutants})
    width = driver.execute_script("return document.documentElement.scrollWidth")
    assert width <= 1280  # no sideways scrolling of the page
    for block in blocks:
        wrap = block.find_element(By.CSS_SELECTOR, ".mxwrap")
        assert driver.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", wrap)
    wrap = blocks[0].find_element(By.CSS_SELECTOR, ".mxwrap")
    header = wrap.find_element(By.CSS_SELECTOR, "thead tr:nth-child(2) th:nth-child(2)")
    before = header.location["y"]
    driver.execute_script("arguments[0].scrollTop = 200", wrap)
    scrolled = driver.execute_script("return arguments[0].scrollTop", wrap)
    assert scrolled > 0
    top = wrap.location["y"]
    assert top <= header.location["y"] <= top + 40  # the status row stays at the top of the block
    first_row = wrap.find_element(By.CSS_SELECTOR, "tbody tr:first-child th.t")
    assert first_row.location["y"] < before  # while the body scrolled under it


def test_fault_view_lists_scripted_and_never_scripted_faults(driver, tmp_path):
    data = sample()
    open_report(driver, tmp_path, data)
    tab(driver, "faults")
    coverage = fault_coverage(data)
    rows = shown(driver, "#fault-table tbody tr")
    assert len(rows) == len(coverage.rows)
    never = shown(driver, "#fault-table tbody tr.unscripted")
    assert len(never) == len(coverage.never) > 0
    labels = {row.find_elements(By.TAG_NAME, "td")[1].text for row in never}
    assert "cut mid-tool-call args" in labels and "cut mid-text" not in labels
    tab(driver, "guards")
    per_test = shown(driver, "#faults-by-test tbody tr")
    assert len(per_test) == len(coverage.by_test)
