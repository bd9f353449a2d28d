"""compare.report.markdown.format_value: a standard deviation below the printed precision keeps a digit."""

from compare.report.markdown import format_value


def test_a_std_below_the_printed_precision_shows_its_first_significant_digit():
    assert format_value(0.38168, std=0.00028, n=3) == "0.382 ± 0.0003 (n=3)"
    assert format_value(0.38, std=0.00004) == "0.380 ± 0.00004"


def test_other_stds_print_at_the_table_precision():
    assert format_value(0.38, std=0.0048, n=3) == "0.380 ± 0.005 (n=3)"
    assert format_value(0.38, std=0.0, n=2) == "0.380 ± 0.000 (n=2)"
    assert format_value(0.38, std=0.00095) == "0.380 ± 0.001"
    assert format_value(0.38, "best", std=0.012) == "**0.380 ± 0.012**"
    assert format_value(None) == "—"
