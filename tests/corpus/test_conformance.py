"""Every corpus log folds to exactly what dsh's own code computed.

For each log and each variant (projected, runtime, zstd) the final fold and
every `at` entry must equal `*.expected.json`; a log dsh failed on must fail
here at the same stage. Skips when ../shared/corpus is absent.
"""

from __future__ import annotations

import json

import pytest

from dshreplay.core.surface import SurfaceFold
from dshreplay.errors import DeriveError, FoldError
from dshreplay.io.reader import LogReader
from dshreplay.session import Session

from conftest import CORPUS, corpus_available


def _cases():
    if not corpus_available():
        return [pytest.param(None, None, id="corpus-absent")]
    index = json.loads((CORPUS / "index.json").read_text())
    cases = []
    for entry in index["logs"]:
        name = entry["name"]
        cases.append(pytest.param(name, f"{name}.jsonl", id=name))
        for variant in entry["variants"]:
            cases.append(pytest.param(name, variant, id=variant))
    return cases


def _state_json(fold: SurfaceFold) -> dict:
    state = fold.state()
    out = {"nodes": list(state.nodes), "replacements": [r.to_json() for r in state.replacements]}
    try:
        out["messages"] = state.messages()
    except DeriveError as exc:
        out["messages"] = None
        out["errorStage"] = "derive"
        out["error"] = str(exc)
    return out


def folds_as_dsh(reader, expected: dict) -> None:
    """The fold of `reader`'s events equals dsh's `*.expected.json`: the final state and every `at`
    point, or the fold fails at the seq where dsh's failed. (The stores' and ZIPs' test reads
    their sessions through this too.)"""
    wanted = {int(seq): value for seq, value in expected["at"].items()}
    got: dict[int, dict] = {}
    fold_error = None
    fold = SurfaceFold()
    for event in reader.events():
        try:
            fold.apply(event)
        except FoldError as exc:
            fold_error = exc
            break
        if event.seq in wanted:
            got[event.seq] = _state_json(fold)
    count = reader.event_count

    if expected["errorStage"] == "fold":
        assert fold_error is not None, f"dsh failed: {expected['error']}"
        assert fold_error.seq == min(s for s, v in wanted.items() if v.get("errorStage") == "fold")
    else:
        assert fold_error is None
        assert count == expected["eventCount"]
        final = _state_json(fold)
        assert final["nodes"] == expected["final"]["nodes"]
        assert final["replacements"] == expected["final"]["replacements"]
        assert final["messages"] == expected["final"]["messages"]
        assert (final.get("errorStage") == "derive") == (expected["errorStage"] == "derive")

    for seq, want in wanted.items():
        if want.get("errorStage") == "fold":
            assert seq not in got
            continue
        assert got[seq]["nodes"] == want["nodes"], seq
        assert got[seq]["replacements"] == want["replacements"], seq
        assert got[seq]["messages"] == want["messages"], seq
        assert got[seq].get("errorStage") == want.get("errorStage"), seq


@pytest.mark.parametrize("name,filename", _cases())
def test_log_folds_exactly_as_dsh(corpus_dir, name, filename):
    upstream = corpus_dir / "upstream"
    expected = json.loads((upstream / f"{name}.expected.json").read_text())
    with LogReader(upstream / filename) as reader:
        assert reader.header == expected["header"]
        folds_as_dsh(reader, expected)


@pytest.mark.parametrize("name,filename", _cases())
def test_fold_command_agrees_with_dsh_on_the_final_state(corpus_dir, name, filename):
    upstream = corpus_dir / "upstream"
    expected = json.loads((upstream / f"{name}.expected.json").read_text())
    report = Session(upstream / filename).fold()
    if expected["error"]:
        assert report.error is not None
        assert report.error.kind == expected["errorStage"]
        return
    assert report.error is None
    assert list(report.state.nodes) == expected["final"]["nodes"]
    assert report.messages == expected["final"]["messages"]


def test_corpus_is_complete_enough(corpus_dir):
    index = json.loads((corpus_dir / "index.json").read_text())
    assert len(index["logs"]) >= 160
    for entry in index["logs"]:
        assert (corpus_dir / "upstream" / f"{entry['name']}.jsonl").is_file(), entry["name"]
