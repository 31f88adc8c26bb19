"""Every scene loads, every step leads to a valid state, and the captions' claims hold."""

import pytest

from explorer.core.analysis.analysis import analyze
from explorer.core.files.datafile import DataFileError
from explorer.core.words.scenes import load_scenes
from explorer.core.words.why import load_topics

REQUIRED = {"cpu-vs-gpu", "decode-batching", "kv-cache-limit", "quadratic-attention", "tensor-cores",
            "bandwidth-parallelism", "cnn-vs-transformer", "mixture-of-experts"}


@pytest.fixture(scope="module")
def scenes(catalog, models):
    topics = {t.id for t in load_topics(catalog)}
    return load_scenes(catalog, models, topics)


def run(scenes, catalog, models, scene, step):
    s = scenes[scene].session_at(step)
    return analyze(models[s.model], s.params, s.what_if(s.primary).apply(catalog[s.primary]))


def test_the_required_scenes_exist_and_every_step_analyses(scenes, catalog, models):
    assert set(scenes) >= REQUIRED
    for scene in scenes.values():
        assert scene.title and len(scene.steps) >= 3
        for i, step in enumerate(scene.steps):
            assert step.caption
            s = scene.session_at(i)
            for ident in s.hardware:
                assert analyze(models[s.model], s.params, catalog[ident]).totals.time_s > 0


def test_cpu_vs_gpu_claims(scenes, catalog, models):
    cpu = run(scenes, catalog, models, "cpu-vs-gpu", 0)
    gpu = run(scenes, catalog, models, "cpu-vs-gpu", 2)
    assert cpu.hardware.kind == "cpu" and gpu.hardware.kind == "gpu"
    for a in (cpu, gpu):
        assert a.totals.memory_time_s > a.totals.compute_time_s
    prefill = run(scenes, catalog, models, "cpu-vs-gpu", 3)
    assert prefill.totals.compute_time_s > prefill.totals.memory_time_s


def test_batching_claims(scenes, catalog, models):
    last = run(scenes, catalog, models, "decode-batching", 3)
    bound = {o.name: bool(m) for o, m in zip(last.ops, last.memory_bound, strict=True)}
    assert not bound["down_proj"] and not bound["q_proj"]  # projections compute-bound
    assert bound["attn_score"] and bound["attn_value"]  # attention stays memory-bound
    assert last.totals.fits_in_memory


def test_kv_cache_claims(scenes, catalog, models):
    fits = [run(scenes, catalog, models, "kv-cache-limit", i).totals.fits_in_memory for i in range(4)]
    assert fits == [True, False, True, True]
    # An L4 reports 23,034 MiB; a serving engine takes 90% of it.
    assert "(22.5 GiB usable)" in scenes["kv-cache-limit"].caption_at(0, catalog, models)
    assert "at most 10 conversations fit" in scenes["kv-cache-limit"].caption_at(1, catalog, models)


def test_mixture_of_experts_claims(scenes, catalog, models):
    """At batch 1 Mixtral (46.7 B) reads about the weights of a dense 13 B model and
    decodes about as fast; at batch 64 its tokens touch every expert and it is slower."""
    from explorer.core.model.workload import WorkloadParams

    def dense(batch):
        return analyze(models["llama-2-13b"], WorkloadParams(batch=batch, context=1024), catalog["h200-sxm"])

    one, sixty_four = (run(scenes, catalog, models, "mixture-of-experts", i) for i in (0, 2))
    assert one.model.parameter_count() > 3 * models["llama-2-13b"].parameter_count()
    assert one.totals.time_s == pytest.approx(dense(1).totals.time_s, rel=0.1)
    assert sixty_four.totals.time_s > 1.2 * dense(64).totals.time_s
    text = scenes["mixture-of-experts"].caption_at(0, catalog, models)
    assert "46.7 B parameters" in text and "12.9 B active" in text
    assert "faster than a dense Llama 2 13B" in text


def test_every_caption_claim_holds(scenes, catalog, models):
    """Every scene step: its filled-in numbers recompute, its words match its claims, and
    every direction word is backed by a claim."""
    for scene in scenes.values():
        for i in range(len(scene.steps)):
            e = scene.explain_step(i, catalog, models)
            assert e.problems() == [], (scene.id, i + 1)


def test_batching_scene_says_how_far_from_the_largest_batch(scenes, catalog, models):
    # Batch 512 is not "near the largest batch that fits": 1,800 would fit.
    caption = scenes["decode-batching"].caption_at(3, catalog, models)
    assert "up to 1,800 sequences would fit" in caption and "Near the largest" not in caption


def test_cnn_scene_quotes_the_convolutions_own_intensities(scenes, catalog, models):
    caption = scenes["cnn-vs-transformer"].caption_at(0, catalog, models)
    assert "31.7–332 FLOP/byte (median 100 FLOP/byte)" in caption and "tens of" not in caption


def test_a_wrong_caption_claim_fails_its_check(tmp_path, catalog, models):
    # GPT-2 decoding one token on a T4 is memory-bound: a caption that says otherwise fails.
    scene = load_one_scene(tmp_path, catalog, models,
                           "{caption: 'Compute-bound already.', check: {bound: compute}}")["s"]
    problems = scene.explain_step(0, catalog, models).problems()
    assert problems and "not compute-bound" in problems[0]
    bare = load_one_scene(tmp_path, catalog, models, "{caption: 'It runs faster now.'}")["s"]
    assert any("'faster'" in p for p in bare.explain_step(0, catalog, models).problems())
    with pytest.raises(DataFileError, match=r"steps\[0\]\.check\.bound"):
        load_one_scene(tmp_path, catalog, models, "{caption: x, check: {bound: sideways}}")


def test_attention_claims(scenes, catalog, models):
    def softmax_share(step):
        a = run(scenes, catalog, models, "quadratic-attention", step)
        return sum(float(s) for o, s in zip(a.ops, a.time_share, strict=True) if o.role == "attn_softmax")

    assert softmax_share(1) > 2 * softmax_share(0)
    fused = run(scenes, catalog, models, "quadratic-attention", 2)
    assert not any(bool(m) for o, m in zip(fused.ops, fused.memory_bound, strict=True)
                   if o.role.startswith("attn"))


def test_precision_claims(scenes, catalog, models):
    times = [run(scenes, catalog, models, "tensor-cores", i).totals.time_s for i in range(3)]
    assert times[0] > 5 * times[1] > 5 * 1.5 * times[2]


def test_cnn_claims(scenes, catalog, models):
    def conv_compute_bound(step):
        a = run(scenes, catalog, models, "cnn-vs-transformer", step)
        flags = [not bool(m) for o, m in zip(a.ops, a.memory_bound, strict=True) if o.role == "conv"]
        return sum(flags) / len(flags)

    assert conv_compute_bound(1) > 0.5 > conv_compute_bound(0)
    decode = run(scenes, catalog, models, "cnn-vs-transformer", 2)
    assert all(decode.memory_bound[decode.flops > 0])
    batched = run(scenes, catalog, models, "cnn-vs-transformer", 3)
    assert not dict(zip((o.name for o in batched.ops), batched.memory_bound, strict=True))["down_proj"]


def load_one_scene(tmp_path, catalog, models, *steps):
    """Load a one-scene file whose steps are the given YAML flow mappings."""
    lines = "\n".join(f"  - {step}" for step in steps)
    (tmp_path / "s.yaml").write_text("schema: 1\nscenes:\n- id: s\n  title: S\n"
                                     f"  start: {{hardware: [t4], workload: {{model: gpt2}}}}\n"
                                     f"  steps:\n{lines}\n")
    topics = {t.id for t in load_topics(catalog)}
    return load_scenes(catalog, models, topics, tmp_path)


def test_broken_scenes_name_the_step(tmp_path, catalog, models):
    assert len(load_one_scene(tmp_path, catalog, models, "{caption: ok}")["s"].steps) == 1
    with pytest.raises(DataFileError) as info:
        load_one_scene(tmp_path, catalog, models, "{caption: ok}", "{caption: bad, batch: 0}")
    assert info.value.entry == "s" and info.value.field == "steps[1].batch"
    with pytest.raises(DataFileError, match="unknown topic 'gravity'"):
        load_one_scene(tmp_path, catalog, models, "{caption: ok, topic: gravity}")


def test_parallelism_claims(scenes, catalog, models):
    scene = scenes["bandwidth-parallelism"]
    memory = [run(scenes, catalog, models, scene.id, i).totals.memory_time_s for i in range(4)]
    assert memory[0] == pytest.approx(8 * memory[1])  # 8× in flight, 8× bandwidth
    assert memory[1] > memory[2] > memory[3]
    full = analyze(models["llama-3-8b"], scene.session_at(3).params, catalog["a100-80gb-sxm"])
    assert memory[3] == pytest.approx(full.totals.memory_time_s)  # 1 MiB reaches the peak
    first = scene.caption_at(0, catalog, models)
    assert "406 ns" in first and "40.4 GB/s" in first and "2.04 TB/s" in first  # 16 KiB / 406 ns
    assert "808 KiB" in scene.caption_at(3, catalog, models)
    assert scene.topic_at(3) == "latency-hiding"


def test_captions_are_checked_when_loaded(tmp_path, catalog, models):
    with pytest.raises(DataFileError, match=r"cannot fill in.*no measured memory latency") as info:
        load_one_scene(tmp_path, catalog, models, '{caption: "T4 memory latency {t4/latency}"}')
    assert info.value.field == "steps[0].caption"
    with pytest.raises(DataFileError, match="no measured memory latency"):
        load_one_scene(tmp_path, catalog, models, "{caption: slow, in_flight: 4 KiB}")


def test_a_scene_loaded_without_its_captions_is_filled_in_before_it_is_played(tmp_path, catalog, models):
    """The window reads the shipped scenes without filling their captions in (they are
    filled in here, by the suite, and when a scene starts): the same mistake is then
    found by ``fill_every_step``, naming the scene, the step and what is missing."""
    from explorer.core.words.scenes import StepError, fill_every_step

    (tmp_path / "s.yaml").write_text(
        "schema: 1\nscenes:\n- id: s\n  title: S\n  start: {hardware: [t4], workload: {model: gpt2}}\n"
        "  steps:\n  - {caption: fine}\n  - {caption: 'T4 memory latency {t4/latency}'}\n")
    topics = {t.id for t in load_topics(catalog)}
    with pytest.raises(DataFileError, match="cannot fill in"):
        load_scenes(catalog, models, topics, tmp_path)
    scene = load_scenes(catalog, models, topics, tmp_path, fill=False)["s"]
    with pytest.raises(StepError, match=r"^S, steps\[1\]\.caption: cannot fill in.*no measured memory"):
        fill_every_step(scene, catalog, models)


def test_every_shipped_scene_fills_in_every_step(scenes, catalog, models):
    """What the window no longer does at start-up, the suite does for every shipped scene."""
    from explorer.core.words.scenes import fill_every_step

    for scene in scenes.values():
        fill_every_step(scene, catalog, models)


def test_a_step_names_a_shipped_profile_that_replaces_the_one_shown(tmp_path, catalog, models):
    h100, mi300x = "qwen1.5-0.5b-chat-h100", "qwen1.5-0.5b-chat-mi300x"
    scene = load_one_scene(tmp_path, catalog, models, f"{{caption: on an H100, profile: {h100}.yaml}}",
                           f"{{caption: on an MI300X, hardware: [mi300x], profile: {mi300x}.yaml}}",
                           "{caption: and again}")["s"]
    sources = [scene.session_at(i).profile.source for i in range(3)]
    assert sources == [f"{h100}.pt.trace.json.gz", *[f"{mi300x}.pt.trace.json.gz"] * 2]  # until replaced
    assert scene.state_at(1, catalog, models).profile.steps == 1


@pytest.mark.parametrize("name", ["no-such-run.yaml", "../hardware/h100.yaml", "kernel-names.yaml"])
def test_a_profile_that_is_not_shipped_is_refused_naming_the_step(tmp_path, catalog, models, name):
    with pytest.raises(DataFileError, match=r"steps\[0\]\.profile.*is shipped"):
        load_one_scene(tmp_path, catalog, models, f"{{caption: x, profile: '{name}'}}")
