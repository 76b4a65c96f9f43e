"""The build backend of spindle-bridge: setuptools' own (``setuptools.build_meta``), taken from the
interpreter's site directories when pip's build isolation hides them.

``pip install loader-gpu/python`` builds in an isolated environment into which it would first
download setuptools and wheel, which an offline machine cannot. The interpreter usually has both
(Debian's python3-setuptools and python3-wheel): this backend asks for nothing then and builds
with them; where the interpreter lacks them it asks pip for them, as a plain setuptools project
would.
"""
import site
import sys

_REQUIRES = ["setuptools>=61", "wheel"]


def _build_meta():
    """setuptools.build_meta, from the build environment or else the interpreter; None if
    neither has setuptools and wheel."""
    try:
        import setuptools.build_meta as build_meta
        import wheel  # noqa: F401 (setuptools' bdist_wheel needs it)
        return build_meta
    except ImportError:
        pass
    for d in site.getsitepackages([sys.base_prefix]):
        site.addsitedir(d)
    sys.modules.pop("setuptools", None)
    try:
        import setuptools.build_meta as build_meta
        import wheel  # noqa: F401,F811
        return build_meta
    except ImportError:
        return None


def _requires():
    return [] if _build_meta() is not None else list(_REQUIRES)


def _backend():
    build_meta = _build_meta()
    if build_meta is None:
        raise RuntimeError("spindle-bridge builds with setuptools and wheel, which neither the "
                           "build environment nor the interpreter (%s) has: install them "
                           "(Debian: apt install python3-setuptools python3-wheel)"
                           % sys.base_prefix)
    return build_meta


def get_requires_for_build_wheel(config_settings=None):
    return _requires()


def get_requires_for_build_sdist(config_settings=None):
    return _requires()


def get_requires_for_build_editable(config_settings=None):
    return _requires()


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _backend().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _backend().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory, config_settings=None):
    return _backend().build_sdist(sdist_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _backend().prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _backend().build_editable(wheel_directory, config_settings, metadata_directory)
