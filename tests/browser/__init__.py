"""Real-browser tests: JupyterLab in headless Chromium, looking at what a student sees.

A package (not loose modules) so the helpers import as ``tests/browser/*`` siblings
without a generic top-level name such as ``lab`` landing on ``sys.path``.
"""
