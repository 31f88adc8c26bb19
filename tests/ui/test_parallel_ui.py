"""A step spread over devices in the window: the link's roof on the chart, a communication
op's card, the devices boxes and the memory bar's optimizer state."""

from __future__ import annotations


def test_the_window_draws_the_link_roof_and_explains_an_all_reduce(window, qtbot):
    state = window.state
    state.set_devices(["h100-sxm"])
    state.set_model("llama-3-70b")
    state.set_params(context=4096, tp=8)

    def links():
        return [line for line in window.chart.chart.lines if line.kind == "link"]

    qtbot.waitUntil(lambda: bool(links()))
    links = links()
    assert len(links) == 1 and "NVLink 4" in links[0].tooltip
    state.select_op("attn_all_reduce")
    card = window.details_panel.toPlainText()
    assert "NVLink 4, 450 GB/s per direction" in card and "1.2 µs: oneshot" in card  # the engines' kernel
    state.set_params(allreduce="nccl")
    card = window.details_panel.toPlainText()
    assert "6.6 µs" not in card and "ring/LL" in card
    panel = window.workload_panel
    assert panel.degrees["tp"].value() == 8
    rows = [panel.table_model.index(r, 0).data() for r in range(panel.table_model.rowCount())]
    assert "attn_all_reduce" in rows


def test_the_workload_panel_sets_a_training_split(window):
    panel = window.workload_panel
    state = window.state
    state.set_model("llama-2-7b")
    panel.phase.setCurrentText("train")
    panel.degrees["dp"].setValue(4)  # batch 1 over 4 replicas: accepted, and the note says so
    assert state.params.dp == 4 and "3 take none" in panel.notes.text()
    panel.batch.setValue(8)
    panel.degrees["dp"].setValue(4)
    assert state.params.dp == 4 and state.params.phase == "train"
    assert panel.allreduce.isVisibleTo(panel)  # training over 4 replicas: a gradient all-reduce
    panel.recompute.setCurrentText("full")
    panel.sp.setChecked(True)
    panel.zero.setValue(1)
    assert (state.params.recompute, state.params.sp, state.params.zero) == ("full", True, 1)
    assert panel.zero.isVisibleTo(panel) and panel.sp.isVisibleTo(panel)
    names = [name for name, _, _ in panel.memory._parts]
    assert names[:2] == ["weights", "optimizer state"]
    panel.phase.setCurrentText("decode")  # leaving training puts its rows back to their defaults
    assert state.params.phase == "decode"
    assert (state.params.recompute, state.params.sp, state.params.zero) == ("none", False, 0)
    assert not panel.zero.isVisibleTo(panel) and not panel.sp.isVisibleTo(panel)
    assert not panel.allreduce.isVisibleTo(panel)  # decode with DP only: no all-reduce
    state.undo()  # one step
    assert (state.params.phase, state.params.recompute, state.params.zero) == ("train", "full", 1)


def test_a_prefill_s_cached_prefix_is_shown_only_for_a_prefill_and_leaving_it_resets_it(window):
    panel, state = window.workload_panel, window.state
    state.set_model("llama-3-8b")
    assert not panel.prefix.isVisibleTo(panel)  # decode: its cached tokens are its context
    panel.phase.setCurrentText("prefill")
    assert panel.prefix.isVisibleTo(panel)
    panel.prefix.setValue(1536)
    assert state.params.prefix == 1536 and state.analysis().params.kv_tokens == 1536 + state.params.seq
    panel.phase.setCurrentText("decode")  # refused otherwise: the prefix goes back to 0, one step
    assert (state.params.phase, state.params.prefix) == ("decode", 0)
    assert not panel.prefix.isVisibleTo(panel)
    state.undo()
    assert (state.params.phase, state.params.prefix) == ("prefill", 1536)
