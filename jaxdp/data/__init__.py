"""Real data (optional extra ``jaxdp[data]``): bundled public datasets and expert loss streams.

scikit-learn (digits, breast_cancer, wine, iris, diabetes) and river (Phishing, Bananas,
TrumpApproval) ship these files inside the package; nothing is downloaded. The packages are
imported only when a dataset is loaded, so ``import jaxdp`` works without the extra.
"""
from .datasets import DATASETS, Dataset, available_datasets, load_dataset
from .streams import expert_pool_losses, stream_order

__all__ = ["DATASETS", "Dataset", "available_datasets", "load_dataset", "expert_pool_losses", "stream_order"]
