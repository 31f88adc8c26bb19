"""``roofline-explorer export``: the chart of a scene step, a session, or a whole deck of
scenes to PNG, SVG or PDF, without a display."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from explorer import defaults
from explorer.commands.common import add_model_arguments, count_type, model_of, open_catalog, warn_skipped

FORMATS = ("png", "svg", "pdf", "json", "csv", "pptx", "html")
SCENE_FILES = ("pptx", "html")  # one file holds every step of a scene: a deck, a web page
THEMES = tuple(defaults.THEMES)
VIEWS = ("roofline", "energy")  # as chart.slides.VIEWS (not imported: the parser stays light)


def add_parser(sub) -> None:
    export = sub.add_parser(
        "export", help="render the chart to PNG, SVG, PDF or a web page (no display needed)",
        description="Render the roofline chart of a guided scene's step, of a session, or of "
                    "--hardware and --model for slides; or every step of every scene (--all-scenes).")
    what = export.add_mutually_exclusive_group()
    what.add_argument("--scene", metavar="ID", help="a guided scene (see the Scenes menu)")
    what.add_argument("--session", metavar="FILE", help="a saved session")
    what.add_argument("--all-scenes", action="store_true",
                      help="every step of every scene, one file each, into --out-dir")
    export.add_argument("--step", type=count_type(1000), metavar="N",
                        help="the scene's step, from 1 (default: its last)")
    export.add_argument("--hardware", default=None, metavar="ID[,ID…]",
                        help="devices to overlay, comma-separated, the first primary (without --session)")
    add_model_arguments(export, required=False, help="model (without --session)")
    export.add_argument("--out", metavar="FILE.{png,svg,pdf,json,csv,pptx,html}", help="the file to write")
    export.add_argument("--profile", metavar="FILE",
                        help="a profile of a real run (an Nsight Compute CSV, a PyTorch profiler trace or "
                             "a rocprof-compute workload): its kernels beside the "
                             "prediction")
    export.add_argument("--guesses", metavar="SESSION",
                        help="a saved session whose guesses at a scene's questions are drawn (a deck: on "
                             "each question step's question and answer slides)")
    export.add_argument("--question", action="store_true",
                        help="a step that asks a question drawn as asked: its answer hidden, the question "
                             "as its caption (default: as revealed, the answer among the guesses)")
    export.add_argument("--out-dir", metavar="DIR", help="the folder for --all-scenes")
    export.add_argument("--format", choices=FORMATS, default="svg", help="format for --all-scenes")
    size = export.add_mutually_exclusive_group()
    size.add_argument("--width", type=count_type(defaults.EXPORT_WIDTH_RANGE[1]),
                      default=defaults.EXPORT_WIDTH_PX, metavar="PX",
                      help=f"PNG width in pixels (default {defaults.EXPORT_WIDTH_PX})")
    size.add_argument("--dpi", type=count_type(defaults.EXPORT_DPI_MAX), metavar="DPI",
                      help="PNG as wide as a full slide (13.33 in for 16:9, 10 in for 4:3) at this DPI")
    export.add_argument("--aspect", choices=("16:9", "4:3"), default="16:9")
    export.add_argument("--transparent", action="store_true", help="PNG with a transparent background")
    export.add_argument("--title", help="a title instead of the chart's (or scene's) own")
    export.add_argument("--subtitle", help="a line under the title (a scene's default: its caption)")
    export.add_argument("--no-caption", action="store_true", help="no caption under a scene's title")
    export.add_argument("--no-legend", action="store_true")
    export.add_argument("--no-annotations", action="store_true", help="no roof and ridge labels")
    export.add_argument("--view", choices=VIEWS, default="roofline",
                        help="the picture: the roofline (default) or the energy roofline (FLOP/J against "
                             "intensity, at 45 nm circuit energies and any measured run's fitted constants)")
    export.add_argument("--theme", choices=THEMES, default="light",
                        help="colours: light, dark, or high contrast for projectors")


class _UsageError(Exception):
    pass


def _check(args: argparse.Namespace) -> None:
    if args.all_scenes:
        if not args.out_dir:
            raise _UsageError("--all-scenes needs --out-dir DIR")
        if args.out or args.step:
            raise _UsageError("--all-scenes writes every step into --out-dir: leave out --out and --step")
    elif not args.out:
        raise _UsageError("--out FILE.{png,svg,pdf,json,csv,pptx,html} is required")
    if args.step and not args.scene:
        raise _UsageError("--step needs --scene")
    suffix = Path(args.out).suffix.lower().lstrip(".") if args.out else args.format
    if args.view != "roofline" and suffix == "csv":
        raise _UsageError(f"the {args.view} view has no rows of points and roofs: write .png, .svg, .pdf, "
                          ".json or .pptx")
    if args.view != "roofline" and (args.scene or args.all_scenes):
        raise _UsageError(f"the {args.view} view draws a workload, not a scene (whose captions describe the "
                          "roofline): give --model and --hardware, or --session")
    if (args.scene or args.session or args.all_scenes) and (args.hardware or args.model or args.model_config):
        raise _UsageError("--hardware and --model (or --model-config) are for a chart without --scene or "
                          "--session")


def _jobs(args, catalog, models, err):
    """(session, path, title, subtitle) for every file to write."""
    from explorer.core.model.session import Session, load_session, model_choice

    if args.session:
        return [(load_session(args.session, catalog, models), Path(args.out), args.title,
                 args.subtitle, None, None)]
    if not (args.scene or args.all_scenes):
        hardware = tuple(i.strip() for i in (args.hardware or defaults.DEVICE).split(",") if i.strip())
        if not 1 <= len(hardware) <= 4 or len(set(hardware)) != len(hardware):
            raise _UsageError("--hardware takes one to four different device ids, comma-separated")
        for ident in hardware:
            catalog[ident]
        choice = model_choice(model_of(args, models, defaults.MODEL))
        if choice["model"] not in models and not choice.get("model_config"):  # a GGUF file's model
            raise _UsageError("a chart is drawn from a session, which holds a preset's id or a config.json's "
                              "content: a GGUF file is analysed by analyze, explain, layouts and serve")
        session = Session(hardware=hardware, **choice)
        return [(session, Path(args.out), args.title, args.subtitle, None, None)]
    from explorer.core.words.scenes import open_scenes

    scenes = open_scenes(catalog, models)
    warn_skipped(scenes.skipped, err)

    def job(scene, index, path):
        caption = None if args.no_caption else f"{index + 1}/{len(scene.steps)}. " + \
            scene.caption_at(index, catalog, models)
        return (scene.session_at(index), path, args.title or scene.title,
                args.subtitle if args.subtitle is not None else caption, scene_slots(scene, index),
                (scene, index))

    if args.scene:
        scene = scenes[args.scene]
        if Path(args.out).suffix.lower().lstrip(".") in SCENE_FILES and not args.step:  # every step
            return [job(scene, i, Path(args.out)) for i in range(len(scene.steps))]
        step = args.step or len(scene.steps)
        if step > len(scene.steps):
            raise _UsageError(f"scene {scene.id!r} has steps 1 to {len(scene.steps)}, not {step}")
        return [job(scene, step - 1, Path(args.out))]
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    def name(n: int, scene, i: int) -> str:  # a deck or a page holds a scene's steps; else a file a step
        whole = args.format in SCENE_FILES
        return f"{n:02d}-{scene.id}.{args.format}" if whole else f"{n:02d}-{scene.id}-{i + 1}.{args.format}"

    return [job(scene, i, out_dir / name(n, scene, i))
            for n, scene in enumerate(scenes.values(), 1) for i in range(len(scene.steps))]


def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from explorer.chart.slides import ChartFormat, ExportOptions, format_of
    from explorer.core.model.presets import load_models
    from explorer.document import Document

    try:
        _check(args)
        if args.out and not args.out.lower().endswith((".pptx", ".html")):
            format_of(args.out)
        base = ExportOptions(width_px=args.width, dpi=args.dpi, aspect=args.aspect,
                             transparent=args.transparent, legend=not args.no_legend,
                             annotations=not args.no_annotations, theme=args.theme, view=args.view)
    except (_UsageError, ValueError) as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 2
    catalog = open_catalog(err)
    models = load_models()
    try:
        jobs = _jobs(args, catalog, models, err)
    except _UsageError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 2
    doc = Document(catalog, models)
    profile = None
    if args.profile:
        from explorer.core.model.profile import kept
        from explorer.profiles.reading import read_profile

        profile = kept(read_profile(args.profile))
    guesses: tuple[tuple[str, tuple[float, ...]], ...] = ()
    if args.guesses:
        from explorer.core.model.session import load_session

        guesses = load_session(args.guesses, catalog, models).guesses
    if any(Path(job[1]).suffix.lower() == ".pptx" for job in jobs):
        return _decks(jobs, doc, base, profile, out, err, guesses)
    if any(Path(job[1]).suffix.lower() == ".html" for job in jobs):
        return _pages(jobs, doc, base, profile, Path(args.out_dir) if args.all_scenes else None, out, err)
    from explorer.commands.question_slides import guesses_of, picture_options

    drawn = (ChartFormat.PNG, ChartFormat.PDF)
    write = _writer(any(format_of(path) in drawn for _, path, _, _, _, _ in jobs))
    try:
        for session, path, title, subtitle, slots, step in jobs:
            _show(doc, session, profile, err)
            options = picture_options(doc, _step_options(base, title, subtitle, step), step,
                                      guesses_of(guesses, step), args.question)  # a question's picture
            written = write(doc, path, options, slots)
            print(f"wrote {written} ({written.stat().st_size:,} bytes)", file=out)
    except OSError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 1
    return 0


def _decks(jobs, doc, base, profile, out: TextIO, err: TextIO, guesses=()) -> int:
    """Each .pptx path's jobs as one deck, a slide per job (``pptx_deck``): each picture laid
    out for its place on the slide, as SVG with a PNG fallback."""
    from explorer.chart import palette
    from explorer.chart.roofline_frame import default_title
    from explorer.chart.slides import slide_chart
    from explorer.chart.svg import chart_svg
    from explorer.commands.pptx_deck import Picture, Slide, SlidesUnavailable, layout, write_deck
    from explorer.commands.question_slides import guesses_of, slides_for
    from explorer.ui.chart.export import chart_image, png_bytes, qt_application

    qt_application()  # for the PNG fallbacks
    decks: dict[Path, list] = {}
    for session, path, title, subtitle, slots, step in jobs:
        _show(doc, session, profile, err)
        claims, declared = _claims(doc, step)
        whole = Slide(title or default_title(doc), subtitle or "", _notes(doc, step), claims, declared)
        for slide, change in slides_for(doc, whole, step, guesses_of(guesses, step)):  # a question: two
            place = layout(slide, base.aspect)
            shown = replace(_step_options(base, base.title, base.subtitle, step), slot_in=place.picture_in,
                            width_px=place.png_px, dpi=None, heading=False)
            chart = change(slide_chart(doc, shown, slots), shown.theme)
            svg = chart_svg(chart, shown.transparent, slide.title)
            picture = Picture(svg, png_bytes(chart_image(chart, shown)))
            decks.setdefault(Path(path), []).append((slide, picture))
    theme = palette.THEMES[base.theme]
    try:
        for path, slides in decks.items():
            written = write_deck(path, slides, base.aspect, theme.background, theme.foreground)
            print(f"wrote {written} ({len(slides)} slide(s), {written.stat().st_size:,} bytes)", file=out)
    except SlidesUnavailable as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 2
    except OSError as exc:
        print(f"roofline-explorer: error: {exc}", file=err)
        return 1
    return 0


# Claims that give a figure (a limit too: it backs a verdict); the others are verdicts
# (a bound, a fit, a direction): a slide's caption keeps those first.
NUMBERS = ("quantity", "time", "max_batch")


def _claims(doc, step) -> tuple[tuple[str, ...], int]:
    """The phrases of a scene step's checked claims, its verdicts (``NUMBERS``) first, and
    how many those are (none without a step): the slide's caption keeps the sentences that
    hold them."""
    if step is None:
        return (), 0
    scene, index = step
    explanation = scene.explain_step(index, doc.catalog, doc.models)
    every = [c for c in explanation.declared + explanation.claims if c.phrase]
    verdicts = tuple(dict.fromkeys(c.phrase for c in every if c.kind not in NUMBERS))
    figures = tuple(dict.fromkeys(c.phrase for c in every if c.kind in NUMBERS and c.phrase not in verdicts))
    return verdicts + figures, len(verdicts)


def _pages(jobs, doc, base, profile, index: Path | None, out: TextIO, err: TextIO) -> int:
    """Each .html path's jobs as one web page, a step per job (``export_html``); with
    ``index`` (the --all-scenes folder), an index.html of them."""
    from explorer.chart.roofline_frame import default_title
    from explorer.commands.export_html import page_step, write_pages

    pages: dict[Path, tuple] = {}
    for session, path, title, subtitle, slots, step in jobs:
        _show(doc, session, profile, err)
        page = pages.setdefault(Path(path), (title or default_title(doc), []))
        page[1].append(page_step(doc, _step_options(base, title, subtitle, step), slots))
    return write_pages(pages, base.theme, index, out, err)


def _step_options(base, title, subtitle, step):
    """``base`` with a job's title and caption, and the view its scene step names (the
    scaling laws' budget when it shows them; ``step``: (scene, index), or None)."""
    if step is None:
        return replace(base, title=title, subtitle=subtitle)
    shown = step[0].steps[step[1]]  # the view the step names (``Step.view``)
    return replace(base, title=title, subtitle=subtitle, scaling_budget=shown.scaling_budget,
                   view=shown.view.value)


def _show(doc, session, profile, err: TextIO) -> None:
    """Put ``session`` in ``doc`` to be drawn: its results files loaded (a broken one warned
    of and skipped), the profile given on the command line, if any, beside it."""
    session, skipped = doc.with_results(session)
    warn_skipped(skipped, err)
    doc.replace_session(replace(session, profile=profile) if profile is not None else session, "export")


def _notes(doc, step) -> str:
    """A slide's speaker notes: what the chart shows in words, and the claims checked."""
    from explorer.core.words.explain import explain_workload

    paragraphs = [f"{e.title}: {e.text}" for e in explain_workload(doc.analysis())]
    if step is not None:
        scene, index = step
        explanation = scene.explain_step(index, doc.catalog, doc.models)
        claims = [c for c in explanation.claims + explanation.declared if c.phrase]
        if claims:
            paragraphs.append("Checked claims: " + "; ".join(
                f"{c.phrase} ({'holds' if c.check() is None else 'does not hold: ' + c.check()})"
                for c in claims))
    return "\n\n".join(paragraphs)


def scene_slots(scene, index: int) -> dict[str, int]:
    """The device styles at step ``index`` as the window gives them when the scene is
    played from its start: each device keeps its colour, dash and marker through the scene."""
    from explorer.chart.options import style_slots

    slots: dict[str, int] = {}
    for step in range(index + 1):
        slots = style_slots(slots, scene.session_at(step).hardware)
    return slots


def _writer(needs_qt: bool):
    """What writes a chart file: Qt only when a PNG or PDF is asked for (SVG needs none)."""
    if not needs_qt:
        from explorer.chart.slides import format_of, slide_text
        from explorer.core.files.atomic import write_text_atomic

        return lambda doc, path, options, slots: write_text_atomic(
            path, slide_text(doc, options, slots, format_of(path)))
    from explorer.ui.chart.export import export_chart, qt_application

    qt_application()
    return export_chart

