import pytest

from explorer.core import units


@pytest.mark.parametrize(
    ("text", "dimension", "expected"),
    [
        ("989.4 TFLOP/s", units.FLOP_RATE, 989.4e12),
        ("1979 TOP/s", units.FLOP_RATE, 1979e12),
        ("3.35 TB/s", units.BYTE_RATE, 3.35e12),
        ("80 GB", units.BYTES, 80e9),
        ("50 MiB", units.BYTES, 50 * 2**20),
        ("256 KiB", units.BYTES, 256 * 1024),
        ("1830 MHz", units.FREQUENCY, 1.83e9),
        ("700 W", units.POWER, 700.0),
        ("1,555 GB/s", units.BYTE_RATE, 1.555e12),
        ("406 ns", units.TIME, 406e-9),
        ("2.5 us", units.TIME, 2.5e-6),
        ("3 ms", units.TIME, 3e-3),
    ],
)
def test_parse_quantity(text, dimension, expected):
    assert units.parse_quantity(text, dimension) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("value", "dimension", "message"),
    [
        ("3.35 TB", units.BYTE_RATE, "unknown unit 'TB'"),
        ("989", units.FLOP_RATE, r"unknown unit '\(none\)'"),
        (989.4, units.FLOP_RATE, "written with its unit"),
        ("50 MiB/s", units.BYTE_RATE, "unknown unit 'MiB/s'"),  # binary prefixes: sizes only
        ("fast", units.FLOP_RATE, "expected a compute rate"),
        ("1e999 TFLOP/s", units.FLOP_RATE, "not a finite"),
        ("1,5 TB/s", units.BYTE_RATE, "expected a bandwidth"),  # a decimal comma, not 15
        ("1__0 TB/s", units.BYTE_RATE, "expected a bandwidth"),
        ("3 mB/s", units.BYTE_RATE, "unknown unit 'mB/s'"),  # sub-unit prefixes: times only
        ("406 Kins", units.TIME, "unknown unit"),
    ],
)
def test_parse_quantity_rejects(value, dimension, message):
    with pytest.raises(units.UnitError, match=message):
        units.parse_quantity(value, dimension)


def test_format_si():
    assert units.format_si(989.4e12, "FLOP/s") == "989 TFLOP/s"
    assert units.format_si(3.35e12, "B/s") == "3.35 TB/s"
    assert units.format_si(999.96e9, "B") == "1 TB"
    assert units.format_time(0.0042) == "4.2 ms"
    assert units.format_time(2.5e-7) == "250 ns"
    assert units.format_count(7.0e10) == "70 G"
    assert units.format_bytes(141 * 2**30) == "141 GiB"
    assert units.format_bytes(131_072) == "128 KiB"
    assert units.rate_unit("int8") == "OP/s" and units.rate_unit("bf16") == "FLOP/s"


def test_dtype_bytes():
    assert units.DTYPE_BYTES["bf16"] == 2
    assert units.DTYPE_BYTES["fp8"] == units.DTYPE_BYTES["int8"] == 1
    assert units.DTYPE_BYTES["tf32"] == 4  # stored as fp32


def test_numbers_in_prose_never_use_exponents_or_zero_percent():
    from explorer.core.units import format_number, format_share

    assert [format_number(x) for x in (2093.7, 46.71, 0.5, 128_093, 0.01234)] == \
        ["2,090", "46.7", "0.5", "128,000", "0.0123"]
    assert [format_share(x) for x in (0, 0.0004, 0.052, 0.88)] == ["0%", "under 0.1%", "5.2%", "88%"]


def test_sizes_and_times_just_below_the_next_prefix_have_no_exponent():
    from explorer.core.units import format_bytes, format_time

    assert format_bytes(1000 * 2**20) == "1,000 MiB" and format_bytes(1010 * 2**20) == "1,010 MiB"
    assert format_time(0.9996) == "1 s" and format_time(0.9994) == "999 ms"
