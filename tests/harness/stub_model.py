"""A deterministic stand-in for a vision-language model, for the harness
round trip (tests/harness_roundtrip.rs). It is an lmms-eval "simple" model:
the harness hands it the text `doc_to_text` made and the images
`doc_to_visual` decoded (a video task: the video file's path, checked to be a
file), exactly as it would a real model, and it answers from those alone:

1. no image nor video delivered             -> "I cannot see the image."
2. the prompt lists options ("A. ...")      -> "A"
3. anything else                            -> "yes"

The test computes from the exported rows what that must score (abstentions
on image-free rows, option A's share of golds, "yes" golds elsewhere). An
empty prompt is a failure of the export, not an answer: the stub raises,
naming the task and doc, and lmms-eval stops.
"""

import os
import re

from lmms_eval.api.model import lmms

ABSTAIN = "I cannot see the image."
VIDEO_SUFFIXES = (".mp4", ".mov", ".mkv", ".webm")
_OPTION_A = re.compile(r"(?m)^A\. ")


def answer(prompt, n_images):
    """The stub's reply to one request (also used by tests/harness/vlmevalkit_check.py)."""
    if n_images == 0:
        return ABSTAIN
    if _OPTION_A.search(prompt):
        return "A"
    return "yes"


class BlindspotStub(lmms):
    is_simple = True

    def __init__(self, **kwargs):
        super().__init__()

    def generate_until(self, requests):
        out = []
        for req in requests:
            context, _gen_kwargs, doc_to_visual, doc_id, task, split = req.args
            if not isinstance(context, str) or not context.strip():
                raise ValueError(f"task {task} split {split} doc {doc_id}: empty prompt {context!r}")
            doc = self.task_dict[task][split][doc_id]
            visuals = [v for v in (doc_to_visual(doc) or []) if v is not None]
            for v in visuals:
                # A video task hands over the video file's path, as lmms-eval's
                # video tasks do: it must be a file there. Every other visual
                # must be a decoded picture, not a path or bytes.
                if isinstance(v, str):
                    if not (v.lower().endswith(VIDEO_SUFFIXES) and os.path.isfile(v)):
                        raise ValueError(f"task {task} doc {doc_id}: doc_to_visual gave {v!r}, not a video file")
                elif not (hasattr(v, "size") and v.size[0] > 0 and v.size[1] > 0):
                    raise ValueError(f"task {task} doc {doc_id}: doc_to_visual gave {type(v).__name__}, not an image")
            out.append(answer(context, len(visuals)))
        return out

    def generate_until_multi_round(self, requests):
        return self.generate_until(requests)

    def loglikelihood(self, requests):
        raise NotImplementedError("the blindspot tasks only generate")
