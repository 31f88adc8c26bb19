#!/bin/sh
# Remove what install.sh installed (the same PREFIX, by default ~/.local). Your sessions,
# results and custom devices (in ~/.local/share/roofline-explorer) are kept.
set -eu
prefix=${PREFIX:-$HOME/.local}
rm -rf "$prefix/lib/roofline-explorer"
rm -f "$prefix/bin/roofline-explorer" "$prefix/share/applications/roofline-explorer.desktop"
rm -f "$prefix"/share/icons/hicolor/*/apps/roofline-explorer.png
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$prefix/share/applications" || true
echo "Removed Roofline Explorer from $prefix."
