"""LibreOffice (to render a deck to PDF as a lecture hall's machine would) and Poppler's
tools (to read the PDF's words and their places back), installed from Debian's packages by
the test's set-up where they are missing and this is a Debian machine run as root (as CI
is), else the test is skipped naming what is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

PACKAGES = ("libreoffice-impress", "poppler-utils")


def _missing() -> str | None:
    if shutil.which("soffice") is None:
        return "LibreOffice is not installed (Debian: apt install libreoffice-impress)"
    if shutil.which("pdftotext") is None or shutil.which("pdftoppm") is None:
        return "Poppler's pdftotext and pdftoppm are not installed (Debian: apt install poppler-utils)"
    return None


def libreoffice_missing() -> str | None:
    """Why no deck can be rendered here (None: it can), after installing what may be."""
    why = _missing()
    if why is None or os.environ.get("ROOFLINE_NO_APT") == "1":
        return why
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return f"{why}; not installed by the test (needs apt-get run as root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [apt, "install", "-y", "-q", *PACKAGES]
    try:
        if subprocess.run(install, capture_output=True, timeout=900, env=env).returncode != 0:
            subprocess.run([apt, "update", "-q"], capture_output=True, timeout=300, env=env, check=True)
            subprocess.run(install, capture_output=True, timeout=900, env=env, check=True)
    except (subprocess.SubprocessError, OSError) as error:
        return f"{why}; apt-get install {' '.join(PACKAGES)} failed: {error}"
    return _missing()


def to_pdf(deck: Path, out_dir: Path) -> Path:
    """``deck`` rendered by LibreOffice to a PDF in ``out_dir`` (its own profile folder, so
    a user's LibreOffice settings or a running instance do not matter)."""
    profile = out_dir / "lo-profile"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", "pdf",
                    "--outdir", str(out_dir), str(deck)], capture_output=True, timeout=300, check=True)
    return out_dir / f"{deck.stem}.pdf"
