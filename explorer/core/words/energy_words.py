"""The energy picture in words: what a FLOP and a byte cost at the circuit energies, the
energy balance, where the step sits against it and against the device's time ridge, and
what each measured run's fit gives. Every number is the picture's own
(``core.analysis.energy_roofline``)."""

from __future__ import annotations

from explorer.core.analysis.energy import describe
from explorer.core.analysis.energy_roofline import EnergyView
from explorer.core.units import format_number, format_si


def times(ratio: float) -> str:
    """"211 times", "5.3 times", "0.48 times"."""
    return f"{ratio:,.0f} times" if ratio >= 9.95 else f"{ratio:.2g} times"


def article(precision: str) -> str:
    """"a bf16", "an fp32", "an int8" (as the letters are read out)."""
    return f"{'an' if precision[:1] in 'aefhilmnorsx' else 'a'} {precision}"


def energy_sentences(view: EnergyView) -> list[str]:
    """The picture's sentences, in the order a reader needs them."""
    out = []
    circuit = next((r for r in view.roofs if not r.measured), None)
    step = view.step
    if circuit is not None:
        c = circuit.constants
        out.append(f"At the circuit energies of a 45 nm chip (Horowitz, ISSCC 2014) "
                   f"{article(circuit.precision)} FLOP costs {format_si(c.flop_j, 'J')} and a byte read "
                   f"from DRAM {format_si(c.byte_j, 'J')}: the energy balance is "
                   f"{format_number(circuit.balance)} FLOP/byte, the intensity where a byte costs what "
                   "the arithmetic done on it does. "
                   "Orders of magnitude for teaching: newer chips spend less on both.")
        if step is not None:
            side = "below" if step.intensity < circuit.balance else "above"
            ratio = circuit.balance / step.intensity  # the bytes' joules over the arithmetic's
            share = format_number(100 * step.flops_per_joule / circuit.ceiling, 2)
            out.append(f"The step works at {format_number(step.intensity)} FLOP/byte, {side} the balance: "
                       f"moving its data costs {times(ratio)} the computing, and it does "
                       f"{format_si(step.flops_per_joule, 'FLOP/J')}, {share}% of the "
                       f"{format_si(circuit.ceiling, 'FLOP/J')} the arithmetic alone would allow.")
    if view.ridge is not None:
        device, ridge = view.ridge
        out.append(f"The {device}'s time roofline bends at {format_number(ridge)} FLOP/byte (the grey "
                   "upright line): time and energy each have their own balance point.")
    for roof in (r for r in view.roofs if r.measured):
        reached = [p.flops_per_joule for label, p in view.measured if label == roof.label]
        kernels = f"; its {len(reached)} kernels with a measured power reach up to " \
                  f"{format_si(max(reached), 'FLOP/J')}" if reached else ""
        out.append(f"{roof.label}: {describe(roof.constants)}, {roof.constants.source}{kernels}.")
    out += [f"{note[0].upper()}{note[1:]}." for note in view.notes]
    return out
