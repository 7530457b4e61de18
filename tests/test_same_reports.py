"""benchmarks/same_reports.py's comparison on two folders: byte for byte, a difference named with
its file and first differing line, a file on one side only a difference, matrix.json's clock reading
("generated", now) the one string taken out, and said. Fast, no jax, no git."""

from __future__ import annotations

import json

from benchmarks.same_reports import compare, first_difference


def _tree(root, files: dict[str, bytes]):
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_the_same_bytes_are_same_and_one_character_is_named(tmp_path):
    before = _tree(tmp_path / "b", {"crater/x/crater.md": b"# a\nbroken 5\n", "scan/out.txt": b"ok\n"})
    after = _tree(tmp_path / "a", {"crater/x/crater.md": b"# a\nbroken 6\n", "scan/out.txt": b"ok\n"})
    rows = {name: res for _, name, res in compare(before, after)}
    assert rows["scan/out.txt"] == "same"
    assert rows["crater/x/crater.md"].startswith("DIFFERENT: line 2 (byte 8): 'broken 5' -> 'broken 6'")
    assert [fam for fam, _, _ in compare(before, after)] == ["crater", "scan"]


def test_a_file_on_one_side_only_is_a_difference(tmp_path):
    before = _tree(tmp_path / "b", {"m/draft-rules.toml": b"x\n", "m/a": b"1"})
    after = _tree(tmp_path / "a", {"m/a": b"1"})
    assert ("m", "m/draft-rules.toml", "DIFFERENT: only before") in compare(before, after)
    assert first_difference(b"a\n", b"a\nb\n") == "line 2: (ends) -> 'b'"


def test_only_the_time_of_writing_is_taken_out_and_said(tmp_path):
    def side(root, now, verdict):
        return _tree(root, {"matrix/reports/matrix.json": json.dumps({"generated": now, "v": verdict}).encode(),
                            "matrix/reports/matrix.html": f"<b>{now}</b> {verdict}".encode()})

    rows = compare(side(tmp_path / "b", "2026-01-01T00:00:00+00:00", "OK"),
                   side(tmp_path / "a", "2026-01-01T00:05:00+00:00", "OK"))
    assert all(res.startswith("same but for the time it was written (now: 2026-01-01T00:00:00") for *_, res in rows)
    rows = compare(side(tmp_path / "c", "2026-01-01T00:00:00+00:00", "OK"),
                   side(tmp_path / "d", "2026-01-01T00:05:00+00:00", "FAILING"))
    assert all(res.startswith("DIFFERENT") for *_, res in rows)
