"""Scene questions: each shipped answer against a hand computation, guesses typed and
judged, the measured answer taken from a run's points, guesses kept in a session."""

from __future__ import annotations

from dataclasses import replace

import pytest

from explorer.core.files.datafile import DataFileError, Fields
from explorer.core.model.session import Session, read_session
from explorer.core.words.questions import (
    MAX_GUESSES,
    Measure,
    Question,
    Rate,
    Spread,
    answer_at,
    guess_key,
    judged,
    measured_answer,
    parse_guess,
    verdict,
)
from explorer.core.words.scenes import open_scenes
from explorer.kernels.results import Point


@pytest.fixture(scope="module")
def scenes(catalog, models):
    return open_scenes(catalog, models)


def _questions(scenes):
    return [(s, i) for s in scenes.values() for i, step in enumerate(s.steps) if step.question]


def test_at_least_five_question_steps_ship_each_with_a_positive_answer(scenes, catalog, models):
    asked = _questions(scenes)
    assert len(asked) >= 5
    for scene, index in asked:
        assert answer_at(scene, index, catalog, models).value > 0, (scene.id, index)
    measured = [s.steps[i].question.measure for s, i in asked if s.steps[i].question.measure]
    assert {(m.suite, m.kernel) for m in measured} == {("stream", "triad"), ("gemm", "square")}


def test_the_triad_and_gemm_answers_are_the_datasheet_roofs(scenes, catalog, models):
    scene = scenes["predict-then-measure"]
    triad, gemm = (answer_at(scene, i, catalog, models) for i in (0, 1))
    assert triad.value == pytest.approx(2 * 8 * 5200e6)  # DDR5-5200, two 64-bit channels
    assert triad.source == "the datasheet"
    assert gemm.value == pytest.approx(16 * 2 * 8 * 2 * 5.7e9)  # cores × FMA units × fp32 lanes × 2 × clock


def test_decode_on_the_cpu_is_its_bandwidth_over_the_weights(scenes, catalog, models):
    """Memory-bound decode at batch 1: tokens/s ≈ bandwidth / bytes of weights read (the
    embedding table is looked up, not read; KV cache and activations are under 2 % here)."""
    scene = scenes["predict-then-measure"]
    answer = answer_at(scene, 2, catalog, models)
    # Llama 3 8B's published parameters (resources/models/llama-3.yaml; also 128,256 × 4,096 × 2
    # + 32 × (2 × 4,096² + 2 × 4,096 × 1,024 + 3 × 4,096 × 14,336 + 2 × 4,096) + 4,096 from its
    # config) less its embedding table, at bf16
    weights = (8_030_261_248 - 128_256 * 4096) * 2
    assert answer.value == pytest.approx(83.2e9 / weights, rel=0.03)
    assert [c.kind for c in answer.claims] == ["throughput"]


def test_the_gpu_against_the_cpu_is_their_bandwidth_ratio(scenes, catalog, models):
    answer = answer_at(scenes["predict-then-measure"], 3, catalog, models)
    assert answer.value == pytest.approx(3.35e12 / 83.2e9, rel=1e-3)  # H100 SXM's HBM3 / 2 DDR5-5200 channels
    assert answer.text == "40× faster"


def test_down_proj_turns_compute_bound_where_its_intensity_meets_the_ridge(scenes, catalog, models):
    answer = answer_at(scenes["predict-then-measure"], 4, catalog, models)
    h100 = catalog["h100-sxm"]
    ridge = h100.peak_flops("bf16") / h100.bandwidth_bytes_per_s
    k, n = 14336, 4096  # down_proj: hidden 14,336 → 4,096; bf16 weights and activations

    def intensity(batch):
        return 2 * batch * k * n / (2 * (k * n + batch * (k + n)))

    assert intensity(answer.value) >= ridge > intensity(answer.value - 1)
    assert answer.value == 326


def test_tokens_per_s_at_batch_64_is_the_batch_over_the_bytes_streamed(scenes, catalog, models):
    answer = answer_at(scenes["predict-then-measure"], 5, catalog, models)
    weights = (8_030_261_248 - 128_256 * 4096) * 2
    kv = 64 * 1024 * 32 * 2 * 8 * 128 * 2  # sequences × context × layers × (K, V) × KV heads × head × bf16
    assert answer.value == pytest.approx(64 * 3.35e12 / (weights + kv), rel=0.05)


def test_a_typed_guess_is_read_in_the_question_s_unit():
    q = Question("?", "x/bandwidth", "GB/s")
    assert parse_guess("45", q) == 45e9
    assert parse_guess("1,200", q) == 1200e9
    assert parse_guess("1.5k GB/s", q) == 1500e9
    assert parse_guess("2e1", q) == 20e9
    for bad in ("", "-3", "0", "abc", "1 2"):
        with pytest.raises(ValueError):
            parse_guess(bad, q)
    factor = Question("?", "step/vs-previous", "×")
    assert parse_guess("11x", factor) == 11 and factor.shown(40.26) == "40.3×"
    assert Question("?", "op:down_proj/crossing", "batch").shown(326) == "batch 326"


def test_a_guess_is_judged_against_the_answer():
    assert verdict(105, 100) == "about right"
    assert verdict(250, 100) == "2.5× too high"
    assert verdict(25, 100) == "4× too low"


def test_several_guesses_are_a_spread_judged_in_words():
    q = Question("?", "step/tokens-per-s", "tokens/s")
    guesses = [1000, 4000, 12000, 30000]
    spread = Spread.of(guesses)
    assert (spread.count, spread.low, spread.median, spread.high) == (4, 1000, 8000, 30000)
    from explorer.core.words.questions import Answer

    text = judged(q, guesses, Answer(11985, "11,985 tokens/s", (), "the analysis"))
    assert text == ("Answer: 12,000 tokens/s (the analysis). 4 guesses from 1,000 tokens/s to "
                    "30,000 tokens/s, median 8,000 tokens/s: the median was 1.5× too low, the closest "
                    "(12,000 tokens/s) about right; 1 of 4 within 10 %.")


def _point(kernel, bytes_, time_s, check=None):
    return Point("stream", kernel, "fp32", {"n": 1}, {}, 2, int(bytes_), time_s, time_s, time_s, check=check)


def test_the_measured_answer_is_the_fastest_trusted_point_of_the_kernel():
    q = Question("?", "x/bandwidth", "GB/s", Measure("stream", "triad", Rate.BYTES))
    points = [_point("triad", 24e9, 1.0), _point("triad", 24e9, 0.5), _point("copy", 16e9, 0.1),
              _point("triad", 24e9, 0.1, check="wrong result")]
    answer = measured_answer(q, points, "this laptop")
    assert answer is not None and answer.value == 48e9
    assert answer.source == "measured on this laptop (stream triad)"
    assert measured_answer(q, [_point("copy", 16e9, 0.1)]) is None
    busy = replace(points[1], contended="up to 1.5 cores of other programs")
    busy_answer = measured_answer(q, [busy])
    assert busy_answer is not None and busy_answer.source == (
        "measured on this machine (stream triad; other programs were busy, so it may be low)")
    assert measured_answer(Question("?", "x/bandwidth", "GB/s"), points) is None


def test_guesses_survive_a_session_file_and_old_files_have_none(tmp_path, catalog, models):
    key = guess_key("decode-batching", 2)
    assert key == "decode-batching/3"
    session = Session().with_guesses(key, (1000.0, 2e4))
    assert session.guesses_for(key) == (1000.0, 2e4)
    data = session.to_dict()
    assert data["guesses"] == {key: [1000.0, 2e4]}
    back = read_session(Fields(data, "s.yaml", None), catalog, models)
    assert back.guesses == session.guesses
    old = Session().to_dict()
    assert "guesses" not in old and read_session(Fields(old, "s.yaml", None), catalog, models).guesses == ()
    assert session.with_guesses(key, ()).guesses == ()
    too_many = {**data, "guesses": {key: [1.0] * (MAX_GUESSES + 1)}}
    with pytest.raises(DataFileError, match="at most 30 numbers"):
        read_session(Fields(too_many, "s.yaml", None), catalog, models)
    with pytest.raises(DataFileError):
        read_session(Fields({**data, "guesses": {key: [-1]}}, "s.yaml", None), catalog, models)


def test_a_guess_marker_dropped_on_the_chart_names_a_roof():
    from explorer.chart.elements import Chart, Page
    from explorer.chart.geometry import Rect
    from explorer.chart.guesses import roof_line, value_at

    chart = Chart(Page(800, 600, 13, 18), Rect(100, 50, 700, 550), (0.01, 1e4), (1e9, 1e15), "#fff", "#000")
    at_1 = (chart.x_px(1.0), chart.y_px(50e9))  # 50 GFLOP/s at 1 FLOP/byte: a 50 GB/s roof
    assert value_at(chart, "GB/s", at_1) == pytest.approx(50e9)
    assert value_at(chart, "GFLOP/s", at_1) == pytest.approx(50e9)
    assert value_at(chart, "tokens/s", at_1) is None and value_at(chart, "GB/s", (10, 10)) is None
    (xa, ya), (xb, yb) = roof_line(chart, "GB/s", 50e9)  # from 1 GFLOP/s (0.02 FLOP/byte) to 10 k FLOP/byte
    assert (xa, ya) == pytest.approx((chart.x_px(0.02), chart.y_px(1e9)))
    assert (xb, yb) == pytest.approx((chart.x_px(1e4), chart.y_px(5e14)))
    assert roof_line(chart, "TFLOP/s", 2e15) == ()  # above the plot
