#!/usr/bin/env python3
"""Writes the seeds of fuzz_checkpoint_detect (checkpoint_corpus/) from the tiny SD
checkpoints in the conformance set: their tensor names and shapes in the text form of
tensor_lines.h, with the configuration files that travel with them. Vocabularies are cut
to 64 rows and every tensor is written as F16, so that each input stays small; detection
reads names and shapes only.

Usage: make_checkpoint_seeds.py CONFORMANCE_DIR OUT_DIR"""
import json
import os
import re
import struct
import sys

# The names single-file detection reads (models/sd/sd_checkpoint.cpp and the *_config.cpp
# detectors): the rest of a checkpoint only adds length to a seed.
DETECT = re.compile(
    r"(input_blocks\.\d+\.0\.(weight|in_layers\.0\.weight|out_layers\.3\.weight|op\.weight)$"
    r"|transformer_blocks\.\d+\.norm1\.(weight|bias)$|attn2\.to_k\.weight$|proj_in\.weight$"
    r"|diffusion_model\.out\.2\.weight$|time_embed\.0\.weight$|label_emb\.0\.0\.weight$"
    r"|encoder\.conv_in\.weight$|decoder\.conv_out\.weight$|decoder\.conv_in\.weight$|post_quant_conv\.weight$"
    r"|encoder\.down\.\d+\.block\.\d+\.conv[12]\.weight$"
    r"|token_embedding\.weight$|position(al)?_embedding(\.weight)?$|layer_norm1\.weight$|ln_1\.weight$"
    r"|mlp\.fc1\.weight$|mlp\.c_fc\.weight$|text_projection(\.weight)?$)")


def header(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    meta = h.pop("__metadata__", {})
    return h, meta


def lines(path, keep=lambda name: True, rename=lambda name: name, extra_meta=None, reshape=None):
    h, meta = header(path)
    out = [f"@{k} {v}" for k, v in sorted({**meta, **(extra_meta or {})}.items())]
    for name, t in h.items():
        if not keep(name):
            continue
        shape = list(t["shape"])
        if re.search(r"token_embedding\.weight$", name):
            shape[0] = 64
        for pattern, dim, size in reshape or []:
            if re.search(pattern, name):
                shape[dim] = size
        out.append(f"{rename(name)} F16 {','.join(str(d) for d in shape)}".rstrip())
    return "\n".join(out) + "\n"


def text(path):
    with open(path) as f:
        return f.read().rstrip("\n") + "\n"


def write(out_dir, name, opened, sections):
    body = f"open {opened}\n" + "".join(f"== {rel}\n{content}" for rel, content in sections)
    with open(os.path.join(out_dir, name), "w") as f:
        f.write(body)


def width(path, name):
    return header(path)[0][name]["shape"][1]


def main(conf, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    sd1 = os.path.join(conf, "sd-tiny-1234", "sd1")
    sdxl = os.path.join(conf, "sd-tiny-1234", "sdxl")
    keep = lambda n: DETECT.search(n) is not None

    write(out_dir, "sd1_sidecar", "model.safetensors", [
        ("model.safetensors", lines(os.path.join(sd1, "sd1_tiny_ldm.safetensors"), keep,
                                    extra_meta={"modelspec.resolution": "512x512"})),
        ("model.json", text(os.path.join(sd1, "ldm_config.json")))])
    write(out_dir, "sdxl_shared_config", "sdxl.safetensors", [
        ("sdxl.safetensors", lines(os.path.join(sdxl, "sdxl_tiny_ldm.safetensors"), keep,
                                   extra_meta={"modelspec.prediction_type": "epsilon"})),
        ("ldm_config.json", text(os.path.join(sdxl, "ldm_config.json")))])
    # SD 2.x: SDXL's OpenCLIP encoder under SD 2.x's prefix with SD 1.x's UNet and VAE, and
    # the v_pred and ztsnr marks; the norm the 768-v probe reads is among the kept names.
    te2 = "conditioner.embedders.1.model."
    sdxl_file = os.path.join(sdxl, "sdxl_tiny_ldm.safetensors")
    te2_width = width(sdxl_file, te2 + "token_embedding.weight")
    te2_pooled = width(sdxl_file, te2 + "text_projection")
    # The UNet's cross-attention (and the refiner's label embedding) made to fit the one
    # encoder these seeds keep.
    context = [(r"attn2\.to_k\.weight$", 1, te2_width)]
    write(out_dir, "sd2_marks", "sd2.safetensors", [
        ("sd2.safetensors",
         lines(os.path.join(sd1, "sd1_tiny_ldm.safetensors"), lambda n: keep(n) and not n.startswith("cond_stage"),
               reshape=context)
         + lines(os.path.join(sdxl, "sdxl_tiny_ldm.safetensors"), lambda n: keep(n) and n.startswith(te2),
                 lambda n: "cond_stage_model.model." + n[len(te2):])
         + "v_pred F16 0\nztsnr F16 0\n"),
        ("sd2.json", json.dumps({"family": "sd2", "parameterization": "v", "unet_config": {"num_heads": 4},
                                 "cond_stage_config": {"heads": 2, "act": "gelu"}}, indent=1) + "\n")])
    # SDXL refiner: the second encoder alone, under the refiner's prefix.
    write(out_dir, "sdxl_refiner", "refiner.safetensors", [
        ("refiner.safetensors",
         lines(os.path.join(sdxl, "sdxl_tiny_ldm.safetensors"),
               lambda n: keep(n) and not n.startswith("conditioner.embedders.0."),
               lambda n: "conditioner.embedders.0.model." + n[len(te2):] if n.startswith(te2) else n,
               reshape=context + [(r"label_emb\.0\.0\.weight$", 1, te2_pooled + 5 * 8)])),
        ("refiner.json", json.dumps({"family": "sdxl_refiner", "network_config": {"num_head_channels": 8},
                                     "conditioner": {"embedders.0": {"num_attention_heads": 2}}}, indent=1) + "\n")])
    # Diffusers folders: every tensor (the key maps read them all) and every config file.
    for family, tes in (("sd1", ["text_encoder"]), ("sdxl", ["text_encoder", "text_encoder_2"])):
        src = os.path.join(conf, "sd-tiny-1234", family)
        sections = []
        for sub, weights in [("unet", "diffusion_pytorch_model"), ("vae", "diffusion_pytorch_model")] + \
                            [(t, "model") for t in tes]:
            sections.append((f"{sub}/{weights}.safetensors", lines(os.path.join(src, sub, f"{weights}.safetensors"))))
            sections.append((f"{sub}/config.json", text(os.path.join(src, sub, "config.json"))))
        sections.append(("scheduler/scheduler_config.json", text(os.path.join(src, "scheduler", "scheduler_config.json"))))
        write(out_dir, f"{family}_diffusers", ".", sections)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
