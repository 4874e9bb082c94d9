"""VLMEvalKit's side of the harness round trip (tests/harness_roundtrip.rs).

    python vlmevalkit_check.py EXPORT_DIR OUT_DIR

With LMUData=EXPORT_DIR (VLMEvalKit's data root), for every TSV that
`blindspot export --to vlmevalkit` wrote: VLMEvalKit's own loader
(`build_dataset`, which takes an unknown name as a custom dataset), its own
prompt (`build_prompt`: the images it decoded from base64 and the text),
the stub's answer to that prompt (stub_model.answer, the rule the lmms-eval
run uses), a result file `OUT_DIR/blindspot-stub/blindspot-stub_<name>.xlsx`
(the loaded rows with a `prediction` column, as VLMEvalKit's inference
writes it) and, for a multiple-choice dataset, VLMEvalKit's own scoring of
that file with `exact_matching` (no judge model, offline). Prints one JSON
object per TSV: the class VLMEvalKit chose, rows in the file and rows
loaded, the indices it dropped, empty prompts, the prompt error if any, and
its Overall accuracy. The test decides what is a failure.
"""

import glob
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

warnings.filterwarnings("ignore")

import pandas as pd  # noqa: E402
from stub_model import answer  # noqa: E402
from vlmeval.dataset import build_dataset  # noqa: E402

MODEL = "blindspot-stub"


def check(tsv, out_dir):
    name = os.path.basename(tsv)[: -len(".tsv")]
    file_index = [str(i) for i in pd.read_csv(tsv, sep="\t", usecols=["index"])["index"]]
    report = {"name": name, "rows": len(file_index)}
    ds = build_dataset(name)
    if ds is None:
        report["error"] = "build_dataset returned None"
        return report
    report["class"] = type(ds).__name__
    loaded = [str(i) for i in ds.data["index"]]
    report["loaded"] = len(loaded)
    report["dropped"] = sorted(set(file_index) - set(loaded), key=int)
    predictions, empty = [], []
    for i in range(len(ds.data)):
        line = ds.data.iloc[i]
        try:
            msgs = ds.build_prompt(line)
        except Exception as e:  # noqa: BLE001 - reported, the test decides
            report["prompt_error"] = f"{type(e).__name__}: {e}"
            return report
        text = "\n".join(m["value"] for m in msgs if m["type"] == "text")
        images = [m["value"] for m in msgs if m["type"] == "image"]
        if not text.strip():
            empty.append(str(line["index"]))
        for p in images:
            if not os.path.isfile(p):
                report.setdefault("missing_images", []).append(p)
        predictions.append(answer(text, len(images)))
    report["empty_prompts"] = empty
    data = ds.data.copy()
    data["prediction"] = predictions
    if "image" in data:
        data = data.drop(columns=["image"])
    os.makedirs(os.path.join(out_dir, MODEL), exist_ok=True)
    result = os.path.join(out_dir, MODEL, f"{MODEL}_{name}.xlsx")
    data.to_excel(result, index=False)
    report["result"] = result
    if report["class"] in ("CustomMCQDataset", "CustomTextMCQDataset"):
        scores = ds.evaluate(result, model="exact_matching")
        report["overall"] = float(scores["Overall"].iloc[0])
    return report


def main():
    export, out_dir = sys.argv[1], sys.argv[2]
    for tsv in sorted(glob.glob(os.path.join(export, "*.tsv"))):
        try:
            report = check(tsv, out_dir)
        except Exception as e:  # noqa: BLE001 - reported, the test decides
            report = {"name": os.path.basename(tsv), "error": f"{type(e).__name__}: {e}"}
        print("BLINDSPOT " + json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
