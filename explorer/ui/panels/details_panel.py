"""Details panel: everything about the selected op or roof."""

from __future__ import annotations

from html import escape

from PySide6 import QtWidgets

from explorer.chart.roofs import roof_tooltip
from explorer.core.analysis.roofline import COMPUTE, MEMORY
from explorer.core.model import collective_costs
from explorer.core.model.applicability import Phase
from explorer.core.units import format_count, format_si, format_time
from explorer.state import AppState, RoofRef
from explorer.ui.follow import Follower


class DetailsPanel(QtWidgets.QTextBrowser):
    def __init__(self, state: AppState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setOpenExternalLinks(True)
        self._follower = Follower(state, (state.sig_selection_changed, state.sig_workload_changed,
                                          state.sig_hardware_changed, state.sig_results_changed),
                                  self.refresh, self)
        self.refresh()

    def refresh(self) -> None:
        if self.state.in_gesture:
            return  # a drag updates this once, when it ends
        selected = self.state.selection
        if selected is None:
            self.setHtml("<p>Click a point or a roof on the chart, or a row of the op table, to "
                         "see its numbers here.</p>")
        elif isinstance(selected, RoofRef):
            text = roof_tooltip(self.state.device(selected.device), selected)
            self.setHtml("<p>" + "<br>".join(escape(line) for line in text.splitlines()) + "</p>")
        else:
            self.setHtml(self._op_html(selected.name))

    @staticmethod
    def _link_html(a, index: int) -> str:
        """A communication op: what it sends, over which link, and its time's two parts."""
        o, link = a.ops[index], a.links[index]
        sent, time_s = float(a.bytes[index]), float(a.time_s[index])
        algorithm, latency = collective_costs.op_algorithm(link, o, a.params.phase == Phase.TRAIN)
        how = (f"{algorithm} (core/model/collectives.py)" if o.algorithm else
               f"6.6 µs + {int(o.steps)} steps × {link.latency_s * 1e6:.1f} µs (NCCL's cost model)")
        rows = [
            *_head_rows(o),
            ("bytes sent (each device)", format_si(sent, "B")),
            ("over", f"{link.name}, {format_si(link.per_direction_bytes_per_s, 'B/s')} per direction"),
            ("transfer time", format_time(time_s - latency)),
            ("latency", f"{format_time(latency)}: {how}"),
            ("predicted time", f"{format_time(time_s)} each: communication"),
            ("share of the step", f"{float(a.time_share[index]):.2%}"),
        ]
        return (_table(o.name, rows) + "<p><i>Time = latency + bytes / link rate "
                "(core/model/collective_costs.py): at small messages the latency decides, and more devices "
                "add steps.</i></p>")

    def _op_html(self, name: str) -> str:
        a = self.state.analysis()
        index = next((i for i, o in enumerate(a.ops) if o.name == name), None)
        if index is None:
            return f"<p>{escape(name)} is not part of this workload.</p>"
        o = a.ops[index]
        if a.links[index] is not None:
            return self._link_html(a, index)
        flops, moved, time_s = int(a.flops[index]), int(a.bytes[index]), float(a.time_s[index])
        peak = float(a.peaks[index])
        bound = MEMORY if a.memory_bound[index] else COMPUTE
        compute_s, memory_s = flops / peak, moved / a.roofs.bandwidth_bytes_per_s
        rows = [
            *_head_rows(o),
            ("FLOPs", f"{format_count(flops)}FLOP"), ("bytes", format_si(moved, "B")),
            ("of which weights", format_si(int(o.weight_bytes), "B")),
            ("of which KV cache", format_si(int(o.cache_bytes), "B")),
            ("intensity", f"{flops / moved:.4g} FLOP/byte"),
            ("runs under", f"{format_si(peak, 'FLOP/s')} and "
                           f"{format_si(a.roofs.bandwidth_bytes_per_s, 'B/s')}"),
            ("compute time", format_time(compute_s)), ("memory time", format_time(memory_s)),
            ("predicted time", f"{format_time(time_s)} each = max(compute, memory): {bound}-bound"),
            ("share of the step", f"{float(a.time_share[index]):.2%}"),
        ]
        return (_table(o.name, rows) + "<p><i>Predicted with the roofline model: FLOPs and bytes from "
                "the model's configuration (core/ops.py); time = max(FLOPs / peak, bytes / "
                "bandwidth).</i></p>" + self._profile_html(a, o))

    def _profile_html(self, a, o) -> str:
        """The imported profile's kernels of this op: those the trace recorded this op's
        product shape for, else those of its class (matched by name: the class's figures)."""
        if not self.state.profiles:
            return ""
        from explorer.core.analysis.expected import op_class
        from explorer.core.analysis.profile_match import compare

        comparison = compare(self.state.profiles[0], a, self.state.expected())
        shaped = next((r for r in comparison.products if o.name in r.ops), None)
        if shaped is not None:
            k, n = shaped.shape
            title = f"{shaped.name}, the products of shape {k:,} × {n:,}"
            return _measured_html(self.state.profiles[0], shaped, title, (
                "Kernels matched to this op by the shape the profiler recorded for them "
                "(record_shapes); ops that share a shape share these figures."))
        wanted = op_class(o)
        row = next((r for r in comparison.rows if r.op_class == wanted), None)
        if row is None or not row.kernels:
            return f"<p>The profile has no kernel of this op's class ({escape(wanted)}).</p>"
        title = f"{wanted} (the profile's kernels of this class)"
        return _measured_html(self.state.profiles[0], row, title, (
            "Kernels are told to be of a class by their names (resources/profiles/kernel-names.yaml), "
            "not matched to one op: these are the class's figures."))


def _measured_html(profile, row, title: str, how: str) -> str:
    """A comparison row (a class's or a shape's): its measured time against its bound and
    expected time, and its kernels."""
    from explorer.core.analysis.profile_match import matched_keys

    shape = getattr(row, "shape", ())  # a shape's row: only the kernels matched to that shape
    times = {k.name: k for k in profile.folded(0.0, by_shape=bool(shape))
             if not shape or matched_keys([shape], k.shape)}
    kernels = "".join(f"<li>{escape(n[:90])}: {format_time(times[n].time_s)}, {times[n].launches:,}×</li>"
                      for n in row.kernels[:12] if n in times)
    more = f"<li>… and {len(row.kernels) - 12} more</li>" if len(row.kernels) > 12 else ""
    expected = (f", {row.measured_s / row.expected_s:.2f}× the expected {format_time(row.expected_s)}"
                if row.expected_s else "")
    bound = (f", {row.measured_s / row.bound_s:.2f}× the bound {format_time(row.bound_s)}"
             if row.bound_s > 0 else "")
    return (f"<h4>Measured: {escape(title)}</h4>"
            f"<p>{format_time(row.measured_s)} in the profile{bound}{expected} of one step.</p>"
            f"<ul>{kernels}{more}</ul><p><i>{escape(how)}</i></p>")


def _head_rows(o) -> list[tuple[str, str]]:
    """What every op's card starts with: its role, shape and where it occurs."""
    where = f" (layers {o.layers[0]}–{o.layers[-1]})" if o.layers else ""
    return [("role", o.role), ("shape", o.detail or "–"), ("occurs", f"{o.count}× per step{where}")]


def _table(title: str, rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><td><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>" for k, v in rows)
    return f"<h3>{escape(title)}</h3><table cellspacing='3'>{body}</table>"
