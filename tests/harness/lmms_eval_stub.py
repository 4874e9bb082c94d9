"""`lmms-eval` with the stub model registered: registers `blindspot_stub`
(stub_model.BlindspotStub) in lmms-eval's model registry, then runs
lmms-eval's own command line with the arguments given, unchanged:

    python tests/harness/lmms_eval_stub.py --model blindspot_stub \
        --include_path EXPORT --tasks TASK,... --log_samples --output_path OUT

Task loading, prompting, scoring and the `--log_samples` files are
lmms-eval's; only the model is ours. (lmms-eval 0.7.3 also reads plugins
from LMMS_EVAL_PLUGINS, deprecated, or from installed entry points, which
would need the stub packaged and installed into the venv.)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lmms_eval.models import MODEL_REGISTRY_V2  # noqa: E402
from lmms_eval.models.registry_v2 import ModelManifest  # noqa: E402

MODEL_REGISTRY_V2.register_manifest(ModelManifest(model_id="blindspot_stub", simple_class_path="stub_model.BlindspotStub"))

from lmms_eval.cli.dispatch import main  # noqa: E402

if __name__ == "__main__":
    main()
    sys.exit(0)
