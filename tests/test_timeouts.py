"""A file whose profile passes profile.timeout_s is profiled again alone, then kept as an entry that says why it is
not described (with the streaming line when it is big), and the next index tries it again (issue 30, big files)."""

from __future__ import annotations

import os

from dsstar_lake.lake import Lake


def test_a_timed_out_file_is_retried_alone_kept_as_a_failure_entry_and_retried_next_time(tmp_path):
    lake_dir = tmp_path / "lake"
    (lake_dir / "site").mkdir(parents=True)
    (lake_dir / "site" / "flows.csv").write_text("day,flow\n1,3.5\n2,4.0\n")
    stuck = lake_dir / "site" / "levels.csv"
    stuck.write_text("day,level\n1,7\n2,8\n")
    before = os.stat(stuck)
    attempts = []

    def swap_for_a_pipe(event: str, data: dict) -> None:
        if event == "plan":  # scanned as a file; a profiler that opens it now waits for a writer forever
            stuck.unlink()
            os.mkfifo(stuck)
        if event == "file" and data["path"] == "site/levels.csv":
            attempts.append(event)

    lake = Lake.open(lake_dir, overrides={"profile.timeout_s": 5.0})
    summary = lake.index(progress=swap_for_a_pipe)
    assert len(attempts) == 2  # with the others, then alone
    assert (summary.added, summary.failed) == (2, 1)
    conn = lake.connection()
    text = conn.execute("SELECT description FROM entries WHERE path = 'site/levels.csv'").fetchone()[0]
    assert "Not described: profiling took longer than 5 s and was stopped" in text
    assert "the next `dslake index` profiles it again" in text
    assert [hit.path for hit in lake.search("levels", k=2)][0] == "site/levels.csv"

    # The file is back as it was (same size and time): the next index profiles it again all the same.
    stuck.unlink()
    stuck.write_text("day,level\n1,7\n2,8\n")
    os.utime(stuck, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = lake.index()
    assert (again.changed, again.profiled, again.failed) == (1, 1, 0)
    text = conn.execute("SELECT description FROM entries WHERE path = 'site/levels.csv'").fetchone()[0]
    assert "Not described" not in text and "level" in text
    lake.close()
