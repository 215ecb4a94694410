"""dispatchcore's own backends, installed under the import name ``dispatchcore_backends``.

Each backend registers its kernels through the public ``dispatchcore.Library`` API, exactly as a
third-party backend would, and is found through the ``dispatchcore.backends`` entry-point group.
This package never imports a backend by itself.
"""
