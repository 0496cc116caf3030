"""The packages pip installs: every package under transformer/ and attention_lab/, found on disk (a new feature
folder needs no entry anywhere), and the bundled models as attention_lab.checkpoints (the repository's checkpoints/
folder, mapped in pyproject.toml). Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

PACKAGES = [
    *find_packages(include=["transformer", "transformer.*", "attention_lab", "attention_lab.*"]),
    "attention_lab.checkpoints",
]

if __name__ == "__main__":
    setup(packages=PACKAGES)
