"""Privacy: the mechanisms (:mod:`jaxdp.privacy.mechanisms`), their accounting (:mod:`jaxdp.privacy.accounting`:
typed events, ledgers, certificates, planners' shared machinery) and empirical audits
(:mod:`jaxdp.privacy.audit`). ``accounting`` imports neither ``mechanisms`` nor ``audit``.

The subpackages are imported on use (``from jaxdp.privacy.accounting import certify``), so this package
imports nothing itself.
"""
