"""The roofline chart as a description, without Qt: what is drawn where (roofs, ridges,
points, labels placed so none collide, the key, the title) for a page of a given size.
Every output draws this one description: the SVG writer here, and the Qt painter behind
PNG, PDF and the clipboard, so they cannot disagree."""
