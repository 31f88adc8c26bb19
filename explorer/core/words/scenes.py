"""Guided scenes: a starting state and ordered steps, each a change of state and a caption.

A scene file (resources/scenes/*.yaml) names catalogue devices and models by id, never
copies of their numbers: a caption writes ``{a100-80gb-sxm/latency}`` and the
catalogue fills it in, or ``{step/crossing}`` and the analysis of the step shown fills it
in (``placeholders`` lists every field); each filled number is a claim that
``roofline-explorer scenes check`` recomputes. What the prose says in its own words
("the step waits for memory") is declared under ``check`` and checked the same way:

    check:
      bound: memory                   # the whole step, on the primary device
      compute_bound: [down_proj]      # ops by name; role:conv = all convolutions,
      memory_bound: [most:role:norm]  # most:... = more than half of them
      fits: true                      # weights, KV cache and activations fit
      vs_previous: faster             # the step against the previous step: faster, slower, unchanged

Steps apply cumulatively: the state at step k is the start with steps 1..k applied. A
step may change the devices, the workload parameters, what-ifs, the roofs drawn, the
selected op, the real run's profile shown (``profile: NAME.yaml``, one shipped in
resources/profiles/runs, as the start may name one too), and the "why" topic shown beside
the chart; ``scaling_laws: 5.76e23`` makes
the step's slide the scaling laws of that training budget instead of the roofline, and
``view:`` names the picture a step's point needs (``View``: the roofline by default, the
serving chart, the energy roofline, the memory bar, or each op at its expected time);
export draws it and the window's scene player brings that view forward; ``question:`` makes
the step ask the room first and reveal its answer after (``questions``)::

    schema: 1
    scenes:
    - id: cpu-vs-gpu
      title: CPU vs GPU
      start: {hardware: [xeon-platinum-8480], workload: {model: llama-3-8b}}
      steps:
      - caption: One CPU socket running a decoder.
      - caption: The same step on a GPU.
        hardware: [xeon-platinum-8480, h100-sxm]
        topic: hbm
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.core.analysis.roofline import COMPUTE, MEMORY, BoundKind
from explorer.core.files.datafile import DataFileError, Fields, load_yaml, read_entries
from explorer.core.files.registry import Registry, Skipped
from explorer.core.files.userfiles import load_each, yaml_files
from explorer.core.hardware.hardware import Hardware
from explorer.core.model.models import ModelSpec
from explorer.core.model.parameters import PARAMETERS
from explorer.core.model.profile import Profile, read_saved_profile
from explorer.core.model.session import (
    MAX_DEVICES,
    Session,
    WhatIf,
    read_ids,
    read_session,
    read_what_ifs,
)
from explorer.core.model.workload import WorkloadError
from explorer.core.model.workload_file import read_param
from explorer.core.units import BYTES, PRECISIONS
from explorer.core.words.questions import Question, answer_at, read_question
from explorer.core.words.scene_views import VIEWS, View
from explorer.paths import resource_path

if TYPE_CHECKING:  # the claims and words are read when a step is explained, not at start-up
    from explorer.core.words.claims import Claim, State
    from explorer.core.words.sentences import Explanation

SCHEMA = 1
BOUNDS = tuple(BoundKind)
DIRECTIONS = ("faster", "slower", "unchanged")


@dataclass(frozen=True)
class Check:
    """What a step's caption says in its own words, to be checked against the analysis."""

    bound: str | None = None
    compute_bound: tuple[str, ...] = ()
    memory_bound: tuple[str, ...] = ()
    fits: bool | None = None
    vs_previous: str | None = None

    def claims(self, state: State, previous: State | None) -> list[Claim]:
        from explorer.core.words.claims import Bound, Direction, Fits, OpsBound

        out: list[Claim] = []
        if self.bound:
            out.append(Bound(state, BoundKind(self.bound)))
        for bound, selections in ((COMPUTE, self.compute_bound), (MEMORY, self.memory_bound)):
            for select in selections:
                most = select.startswith("most:")
                out.append(OpsBound(state, select.removeprefix("most:"), bound, most))
        if self.fits is not None:
            out.append(Fits(state, self.fits))
        if self.vs_previous and previous is not None:
            out.append(Direction(previous, state, self.vs_previous))
        return out


@dataclass(frozen=True)
class Step:
    """One step of a scene: its caption and what it changes in the session."""

    caption: str
    hardware: tuple[str, ...] | None = None
    model: str | None = None
    params: tuple[tuple[str, object], ...] = ()
    what_ifs: tuple[tuple[str, WhatIf], ...] | None = None  # replaces all what-ifs when given
    precisions: tuple[str, ...] | None = None
    select: str | None = None
    topic: str | None = None
    in_flight_bytes: float | None = None  # Little's-law cap on the primary device's memory
    check: Check = Check()
    scaling_budget: float | None = None  # the step shows the scaling laws of this budget (FLOPs)
    profile: Profile | None = None  # a real run of the step shown beside it, replacing the one before
    view: View = View.ROOFLINE  # the picture the step shows (not carried to the next step)
    question: Question | None = None  # asked before the step's answer is shown (``questions``)

    @property
    def shown(self) -> View:
        """The picture of this step: the scaling laws where it names a budget, else its view."""
        return View.SCALING if self.scaling_budget is not None else self.view

    def apply(self, session: Session) -> Session:
        changes: dict[str, Any] = {}
        if self.hardware is not None:
            changes["hardware"] = self.hardware
        if self.model is not None:
            changes["model"] = self.model
        if self.params:
            params: dict[str, Any] = dict(self.params)
            changes["params"] = replace(session.params, **params)
        if self.what_ifs is not None:
            changes["what_ifs"] = self.what_ifs
        if self.in_flight_bytes is not None:
            base = replace(session, **changes)
            primary = base.primary
            changes["what_ifs"] = base.with_what_if(primary, replace(
                base.what_if(primary), in_flight_bytes=self.in_flight_bytes)).what_ifs
        if self.profile is not None:
            changes["profile"] = self.profile
        if self.precisions is not None:
            changes["precisions"] = self.precisions
        if self.select is not None or self.model is not None:
            changes["selected_op"] = self.select
        return replace(session, **changes)


@dataclass(frozen=True)
class Scene:
    """A guided story: a starting session and its steps."""

    id: str
    title: str
    summary: str
    start: Session
    steps: tuple[Step, ...]
    origin: str = ""

    def session_at(self, step: int) -> Session:
        """The state after steps 0 … ``step`` (step 0 is the first caption)."""
        if not 0 <= step < len(self.steps):
            raise IndexError(f"scene {self.id!r} has steps 1 to {len(self.steps)}, not {step + 1}")
        session = self.start
        for s in self.steps[: step + 1]:
            session = s.apply(session)
        return session

    def state_at(self, step: int, catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec]) -> State:
        """The step on its primary device, what-ifs applied: what its claims are about."""
        from explorer.core.words.claims import State

        session = self.session_at(step)
        hardware = session.as_used(session.primary, catalog[session.primary])
        model = session.model_spec or models[session.model]  # a listed ("hf-") model: its config.json
        return State(model, session.params, hardware, session.profile)

    def explain_step(self, step: int, catalog: Mapping[str, Hardware],
                     models: Mapping[str, ModelSpec]) -> Explanation:
        """The caption of ``step`` with its ``{…}`` numbers filled in, the claims behind
        them, and the claims its ``check`` declares."""
        state = self.state_at(step, catalog, models)
        previous = self.state_at(step - 1, catalog, models) if step > 0 else None
        from explorer.core.words.placeholder_context import Context  # (not at start-up: 40 ms)
        from explorer.core.words.placeholders import fill_with_claims
        from explorer.core.words.sentences import Explanation

        text, claims = fill_with_claims(self.steps[step].caption, Context(catalog, models, state, previous))
        return Explanation(f"{self.title}, step {step + 1}", text, tuple(claims), {},
                           tuple(self.steps[step].check.claims(state, previous)))

    def caption_at(self, step: int, catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec]) -> str:
        """The caption of ``step`` with its ``{…}`` numbers filled in."""
        return self.explain_step(step, catalog, models).text

    def view_at(self, step: int) -> View:
        """The picture step ``step`` shows (``Step.shown``)."""
        return self.steps[step].shown

    def topic_at(self, step: int) -> str | None:
        """The last topic named up to ``step``."""
        return next((s.topic for s in reversed(self.steps[: step + 1]) if s.topic), None)


class SceneReader:
    """Validates scene files against the catalogue, the known models and topics."""

    def __init__(self, catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec],
                 topic_ids: Collection[str],
                 fill: bool = True) -> None:
        self.catalog, self.models, self.topic_ids = catalog, models, set(topic_ids)
        self.model_ids = set(models)
        self.fill = fill  # fill every caption in now (False: the caller does before playing one)

    def __call__(self, fields: Fields) -> Scene:
        ident = fields.identifier("id")
        title = fields.text("title")
        summary = fields.text("summary", required=False, default="")
        start_fields = fields.child(_with_shipped_profile(fields, "start", fields.mapping("start")), "start")
        start = read_session(start_fields, self.catalog, self.model_ids)
        start_fields.finish()
        steps = []
        for index, raw in enumerate(fields.items("steps")):
            raw = _with_shipped_profile(fields, f"steps[{index}]", raw) if isinstance(raw, dict) else raw
            step_fields = fields.child(raw, f"steps[{index}]")
            steps.append(self._step(step_fields))
            step_fields.finish()
        scene = Scene(ident, title, summary, start, tuple(steps), fields.file)
        if self.fill:
            try:
                fill_every_step(scene, self.catalog, self.models)
            except StepError as exc:
                raise fields.error(exc.field, exc.reason) from None
        return scene

    def _step(self, f: Fields) -> Step:
        hardware = read_ids(f, "hardware", self.catalog, required=False) or None
        if hardware and len(hardware) > MAX_DEVICES:
            raise f.error("hardware", f"at most {MAX_DEVICES} devices can be overlaid")
        model = f.text("model", required=False)
        if model is not None and model not in self.model_ids:
            raise f.error("model", f"unknown model {model!r}")
        params = [(p.name, read_param(f, p)) for p in PARAMETERS if f.has(p.name)]  # by the table's rows
        what_ifs = read_what_ifs(f, self.catalog) if f.has("what_if") else None
        if f.flag("reset_what_if"):
            what_ifs = ()
        precisions = read_ids(f, "precisions", set(PRECISIONS), required=False) or None
        topic = f.text("topic", required=False)
        if topic is not None and topic not in self.topic_ids:
            raise f.error("topic", f"unknown topic {topic!r} (known: {', '.join(sorted(self.topic_ids))})")
        caption = f.text("caption")
        check = self._check(f.child(f.mapping("check"), "check")) if f.has("check") else Check()
        profile = read_saved_profile(f.child(f.raw("profile"), "profile")) if f.has("profile") else None
        budget = f.number("scaling_laws", required=False)
        from explorer.core.analysis.scaling_laws import BUDGET_RANGE  # (with the steps, not the module)

        if budget is not None and not BUDGET_RANGE[0] <= budget <= BUDGET_RANGE[1]:
            raise f.error("scaling_laws", f"a training budget in FLOPs from {BUDGET_RANGE[0]:.0e} to "
                                          f"{BUDGET_RANGE[1]:.0e}, such as 5.76e23; got {budget:g}")
        view = View(f.text("view", required=False, default=View.ROOFLINE.value, choices=VIEWS))
        if budget is not None and view != View.ROOFLINE:
            raise f.error("view", "a step with scaling_laws shows the scaling laws: leave out view")
        question = read_question(f.child(f.mapping("question"), "question")) if f.has("question") else None
        return Step(caption=caption, hardware=hardware, model=model, params=tuple(params),
                    what_ifs=what_ifs, precisions=precisions, select=f.text("select", required=False),
                    topic=topic, in_flight_bytes=f.quantity("in_flight", BYTES, required=False),
                    check=check, scaling_budget=budget, profile=profile, view=view, question=question)

    @staticmethod
    def _check(f: Fields) -> Check:
        def selections(name: str) -> tuple[str, ...]:
            value = f.raw(name, required=False)
            if value is None:
                return ()
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise f.error(name, "expected a list of op names, role:ROLE or most:role:ROLE")
            return tuple(value)

        fits = f.raw("fits", required=False)
        if fits is not None and not isinstance(fits, bool):
            raise f.error("fits", "expected true or false")
        check = Check(bound=f.text("bound", required=False, choices=BOUNDS),
                      compute_bound=selections("compute_bound"), memory_bound=selections("memory_bound"),
                      fits=fits, vs_previous=f.text("vs_previous", required=False, choices=DIRECTIONS))
        f.finish()
        return check


SHIPPED_PROFILE = re.compile(r"[a-z0-9][a-z0-9._-]{0,80}\.yaml")


def _with_shipped_profile(fields: Fields, where: str, mapping: dict[str, object]) -> dict[str, object]:
    """A scene's start or step (``where``) with ``profile: NAME.yaml`` (a profile shipped
    in resources/profiles/runs, as a session keeps it) read in its place; a session's own
    form is left as it is."""
    name = mapping.get("profile")
    if not isinstance(name, str):
        return mapping
    path = resource_path("profiles") / "runs" / name
    if not SHIPPED_PROFILE.fullmatch(name) or not path.is_file():
        raise fields.error(f"{where}.profile", f"no profile {name!r} is shipped (resources/profiles/runs/"
                                               "*.yaml); or give the profile, as a session file keeps it")
    return {**mapping, "profile": load_yaml(path)}


class StepError(ValueError):
    """A scene's step that leads to no valid state or whose caption cannot be filled in."""

    def __init__(self, scene: Scene, field: str, reason: str) -> None:
        super().__init__(f"{scene.title}, {field}: {reason}")
        self.field, self.reason = field, reason


def fill_every_step(scene: Scene, catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec]) -> None:
    """Raise ``StepError`` unless every step of ``scene`` leads to a valid state whose
    caption fills in."""
    for index in range(len(scene.steps)):
        try:
            for ident, what_if in scene.session_at(index).what_ifs:
                what_if.apply(catalog[ident])
            scene.explain_step(index, catalog, models)
            if scene.steps[index].question is not None:
                answer_at(scene, index, catalog, models)
        except KeyError as exc:
            raise StepError(scene, f"steps[{index}].caption", f"cannot fill in: {exc.args[0]}") from None
        except (ValueError, WorkloadError) as exc:
            raise StepError(scene, f"steps[{index}]", str(exc)) from None


class SceneCatalog(Registry[Scene]):
    def __init__(self, scenes: Iterable[Scene], skipped: Iterable[Skipped] = ()) -> None:
        super().__init__("scene", scenes, skipped)


def load_default_scenes(catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec]) -> SceneCatalog:
    """The scenes shipped in resources/scenes, checked against the shipped "why" topics."""
    return load_scenes(catalog, models, topic_ids(catalog, models))


def topic_ids(catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec]) -> set[str]:
    """The ids of the shipped "why" topics a scene step may name."""
    from explorer.core.words.why import load_topics

    return {t.id for t in load_topics(catalog, models=models, check=False)}  # (ids: the suite fills them)


def user_scenes(catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec], topics: Collection[str],
                user_directory: str | Path | None = None) -> tuple[list[Scene], list[Skipped]]:
    """(the user's own scenes, the files skipped) from the data folder's ``scenes/`` (or
    ``user_directory``), one file at a time: a broken file is skipped and listed, its
    captions filled in to check them."""
    if user_directory is None:
        from explorer.paths import user_file

        user_directory = user_file("scenes")
    return load_each(yaml_files(user_directory),
                     lambda path: load_scene_file(path, catalog, models, topics), "scene", "scenes")


def merged(shipped: Mapping[str, Scene], mine: list[Scene], skipped: Iterable[Skipped] = ()) -> SceneCatalog:
    """The shipped scenes and the user's own: a user's scene with a shipped id replaces the
    shipped one, in its place; the others follow."""
    by_id = {scene.id: scene for scene in mine}
    return SceneCatalog([by_id.pop(scene.id, scene) for scene in shipped.values()] + list(by_id.values()),
                        skipped)


def open_scenes(catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec],
                user_directory: str | Path | None = None, fill_shipped: bool = True) -> SceneCatalog:
    """The shipped scenes and the user's own (``user_scenes``, ``merged``). ``fill_shipped``
    False: the shipped scenes' captions are not filled in now (the test suite fills every
    one; a window fills a scene's when it starts it), the user's are."""
    topics = topic_ids(catalog, models)
    shipped = load_scenes(catalog, models, topics, fill=fill_shipped)
    return merged(shipped, *user_scenes(catalog, models, topics, user_directory))


def load_scenes(catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec], topic_ids: Collection[str],
                directory: str | Path | None = None, fill: bool = True) -> SceneCatalog:
    directory = Path(directory) if directory is not None else resource_path("scenes")
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise DataFileError(directory, "holds no scene files (*.yaml)")
    return SceneCatalog(scene for path in files
                        for scene in load_scene_file(path, catalog, models, topic_ids, fill))


def load_scene_file(path: str | Path, catalog: Mapping[str, Hardware], models: Mapping[str, ModelSpec],
                    topic_ids: Collection[str], fill: bool = True) -> list[Scene]:
    return read_entries(path, "scenes", SCHEMA, SceneReader(catalog, models, topic_ids, fill))
