"""lab.luck_variance: the luck-adjusted estimator's variance and bias, measured."""

from __future__ import annotations


def test_the_variance_script_prints_its_table_and_draws_the_ci_plot(tmp_path, capsys):
    from lab import luck_variance

    luck_variance.main(["--games", "deadfall:4", "--deals", "3", "--agents", "heuristic,random", "--plot", str(tmp_path / "ci.png")])
    out = capsys.readouterr().out
    assert "| deadfall | 4 | heuristic vs random | 12 |" in out
    assert (tmp_path / "ci.png").stat().st_size > 0


def test_the_unbiasedness_script_reports_a_z_score(capsys):
    """The full-size check (`--repeats 20 --deals 2000`) is a script; here three small runs."""
    from lab import luck_variance

    luck_variance.main(["--games", "not_for_me:4", "--deals", "30", "--agents", "heuristic,random", "--repeats", "3"])
    row = capsys.readouterr().out.strip().splitlines()[-1]
    assert row.startswith("| not_for_me | 4 | 3 × 30 |")
    assert abs(float(row.split("|")[-2])) < 4
