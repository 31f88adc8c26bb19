#!/bin/sh
# Install Roofline Explorer from this unpacked download for the current user (no root, no
# Python needed): the app into ~/.local/lib/roofline-explorer, the command into
# ~/.local/bin, the menu entry and icons into ~/.local/share. PREFIX=/usr/local (as root)
# installs it for everyone. Run ./uninstall.sh with the same PREFIX to remove it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${PREFIX:-$HOME/.local}
mkdir -p "$prefix/lib" "$prefix/bin" "$prefix/share/applications"
rm -rf "$prefix/lib/roofline-explorer"
cp -R "$here/roofline-explorer" "$prefix/lib/roofline-explorer"
ln -sf "$prefix/lib/roofline-explorer/roofline-explorer" "$prefix/bin/roofline-explorer"
sed "s|^Exec=.*|Exec=$prefix/bin/roofline-explorer|" "$here/roofline-explorer.desktop" \
    > "$prefix/share/applications/roofline-explorer.desktop"
for icon in "$here"/icons/hicolor/*/apps/roofline-explorer.png; do
    size=$(basename "$(dirname "$(dirname "$icon")")")
    mkdir -p "$prefix/share/icons/hicolor/$size/apps"
    cp "$icon" "$prefix/share/icons/hicolor/$size/apps/roofline-explorer.png"
done
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$prefix/share/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$prefix/share/icons/hicolor" || true
echo "Installed Roofline Explorer: $prefix/bin/roofline-explorer (and in the desktop's menu)."
case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "Add $prefix/bin to PATH to run it by name." ;; esac
