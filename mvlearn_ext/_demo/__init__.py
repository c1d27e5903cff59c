"""The demo of ``python -m mvlearn_ext demo``: its registry and its sections.

The floor between the method families and the command line: a section may
import any family (and :mod:`mvlearn_ext.deep` when torch is installed); no
family imports this package or :mod:`mvlearn_ext._cli`. Importing this
package imports nothing else.
"""
