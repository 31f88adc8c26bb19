"""Slide text sized for a lecture hall, in every scene's exported steps: ticks and labels at
least 2.4 % of the slide's height, captions 2.8 % in at most three lines, titles 4 %."""

import pytest

from explorer.chart.elements import ElementKind
from explorer.chart.slides import ExportOptions, slide_chart
from explorer.core.words.scenes import open_scenes
from explorer.document import Document


@pytest.mark.parametrize("aspect", ["16:9", "4:3"])
def test_every_scene_step_s_text_is_large_enough_for_a_hall(catalog, models, aspect):
    doc = Document(catalog, models)
    for scene in open_scenes(catalog, models).values():
        for index in range(len(scene.steps)):
            doc.replace_session(scene.session_at(index), "test")
            caption = scene.caption_at(index, catalog, models)
            step = scene.steps[index]  # the picture the step names: its view, or the scaling laws
            chart = slide_chart(doc, ExportOptions(aspect=aspect, title=scene.title, subtitle=caption,
                                                   view=step.view.value, scaling_budget=step.scaling_budget))
            height = chart.page.height
            sizes = {kind: [t.size / height for t in chart.texts if t.kind == kind]
                     for kind in (ElementKind.TICK, ElementKind.SUBTITLE, ElementKind.TITLE)}
            where = f"{scene.id} step {index + 1}"
            assert min(sizes[ElementKind.TICK]) >= 0.024, where
            assert min(sizes[ElementKind.TITLE]) >= 0.04, where
            assert min(sizes[ElementKind.SUBTITLE]) >= 0.028 and len(sizes[ElementKind.SUBTITLE]) <= 3, where
