"""What a newcomer reads first leads into the repository ("The README sends readers
to `../shared/design/`, outside the repository ... the README links there"), and there is a
changelog with upgrade notes."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_link_of_the_readme_is_a_file_of_the_repository() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "../shared/design" not in readme
    links = re.findall(r"\]\(([^)#]+)\)", readme)
    local = [link for link in links if "://" not in link]
    assert "docs/design/architecture.md" in local and "CHANGELOG.md" in local
    for link in local:
        assert (ROOT / link).exists(), link


def test_the_design_a_contributor_needs_is_in_docs() -> None:
    for name in ("product", "architecture", "mail-interface", "racecraft", "speed-circuit", "speedphreakz", "testing"):
        text = (ROOT / "docs" / "design" / f"{name}.md").read_text(encoding="utf-8")
        assert text.strip(), name
    assert "../shared/design" not in (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")


def test_the_changelog_names_each_migration_and_says_how_to_upgrade() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for migration in sorted((ROOT / "migrations" / "versions").glob("0*.py")):
        assert f"(migration {migration.name[:4]})" in changelog, migration.name
    assert "*Upgrade:*" in changelog and "flagman run --migrate" in changelog
