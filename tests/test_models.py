import json

import pytest
import torch

from torch_bench.models import (
    RESNETS,
    TINY_MODELS,
    ModelLoadError,
    build_resnet,
    build_tiny,
    build_transformer,
    load_config,
    sources,
    transformer_inputs,
)
from torch_bench.models.resnet import resnet

# Parameter counts of torchvision's resnet18 / resnet50 (1000 classes).
TORCHVISION_PARAMETERS = {"resnet18": 11_689_512, "resnet50": 25_557_032}


@pytest.mark.parametrize("name", RESNETS)
def test_resnet_has_torchvision_shape_and_scripts_to_the_same_function(name):
    model, inputs = build_resnet(name, batch_size=1, image_size=32)
    own = resnet(name, prefer_torchvision=False)
    assert sum(p.numel() for p in own.parameters()) == TORCHVISION_PARAMETERS[name]
    with torch.no_grad():
        eager = model(**inputs)
        scripted = torch.jit.script(model)(**inputs)
    assert eager.shape == (1, 1000)
    torch.testing.assert_close(scripted, eager)


def test_tiny_models_run_and_the_encoder_decoder_gets_decoder_inputs():
    assert TINY_MODELS == ("tiny-bert", "tiny-gpt2", "tiny-t5")
    for name in TINY_MODELS:
        model, inputs = build_tiny(name, batch_size=2, seq_length=8)
        assert inputs["input_ids"].shape == (2, 8)
        assert ("decoder_input_ids" in inputs) == (name == "tiny-t5")
        with torch.no_grad():
            logits = model(**inputs).logits
        assert logits.shape == (2, 8, 1024)
    bare, _ = build_tiny("tiny-gpt2", head=False)
    assert type(bare).__name__ == "GPT2Model"


def test_config_from_a_local_file_or_folder(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "gpt2", "n_embd": 32, "n_layer": 1, "n_head": 2, "vocab_size": 100}))
    for ref in (str(tmp_path / "config.json"), str(tmp_path)):
        config = load_config(ref)
        assert (config.model_type, config.n_embd, config.vocab_size) == ("gpt2", 32, 100)


def test_bad_local_configs_say_what_is_wrong(tmp_path):
    with pytest.raises(ModelLoadError, match="no such configuration file"):
        load_config(str(tmp_path / "missing.json"))
    (tmp_path / "c.json").write_text('{"n_embd": 3}')
    with pytest.raises(ModelLoadError, match="needs a 'model_type' key"):
        load_config(str(tmp_path / "c.json"))


def test_a_hub_id_fails_fast_and_clearly_when_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # nothing cached
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelLoadError, match="'bert-base-uncased': not in the local .* "
                                             "HF_HUB_OFFLINE is set"):
        load_config("bert-base-uncased")


def test_a_hub_id_fails_fast_when_the_hub_is_unreachable(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(sources, "HUB_HOST", "127.0.0.1")  # nothing listens on :443
    from transformers import AutoConfig

    asked, cached = [], AutoConfig.from_pretrained

    def from_pretrained(ref, **options):  # what is asked of the Hub, not how long it takes
        asked.append(options.get("local_files_only", False))
        return cached(ref, **options)

    monkeypatch.setattr(AutoConfig, "from_pretrained", from_pretrained)
    with pytest.raises(ModelLoadError, match="unreachable"):
        load_config("gpt2")
    assert asked == [True]  # the local cache only: no download was tried


def _write(path, data):
    path.write_text(json.dumps(data))
    return str(path)


TINY_BERT = {"model_type": "bert", "vocab_size": 100, "hidden_size": 32,
             "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 37,
             "max_position_embeddings": 64}


def test_encoder_decoder_configs_take_vocab_and_positions_from_their_parts(tmp_path):
    from transformers import BertConfig, EncoderDecoderConfig

    from torch_bench.models.transformer import max_positions

    settings = {k: v for k, v in TINY_BERT.items() if k != "model_type"}
    encoder = BertConfig(**settings)
    decoder = BertConfig(**{**settings, "vocab_size": 50, "max_position_embeddings": 32},
                         is_decoder=True, add_cross_attention=True)
    config = EncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    config.decoder_start_token_id, config.pad_token_id = 0, 0
    ref = _write(tmp_path / "config.json", config.to_dict())
    loaded = load_config(ref)
    assert max_positions(loaded) == 32
    model = build_transformer(loaded)
    inputs = transformer_inputs(loaded, 2, 8, labels=True,
                                generator=torch.Generator().manual_seed(0))
    assert int(inputs["decoder_input_ids"].max()) < 50
    with torch.no_grad():
        output = model(**inputs)  # an IndexError when the vocabulary came from the top
    assert output.logits.shape == (2, 8, 50) and torch.isfinite(output.loss)


def test_the_class_the_config_names_is_built(tmp_path):
    ref = _write(tmp_path / "c.json",
                 {**TINY_BERT, "architectures": ["BertForSequenceClassification"]})
    config = load_config(ref)
    model = build_transformer(config)
    assert type(model).__name__ == "BertForSequenceClassification"
    inputs = transformer_inputs(config, 3, 8, labels=True)
    assert inputs["labels"].shape == (3,)
    assert torch.isfinite(model(**inputs).loss)
    assert type(build_transformer(config, head=False)).__name__ == "BertModel"
    missing = load_config(_write(tmp_path / "m.json",
                                 {**TINY_BERT, "architectures": ["BertForTimeTravel"]}))
    with pytest.raises(ValueError, match="names 'BertForTimeTravel'"):
        build_transformer(missing)


def test_fp16_on_cpu_is_refused_as_hugging_face_does():
    from torch_bench.config import build_run_config
    from torch_bench.errors import UserError
    from torch_bench.runner import plan_cases

    with pytest.raises(UserError, match="fp16: half precision is measured on a GPU only"):
        plan_cases(build_run_config(suites=["transformers"], cli_options={"dtype": "half"}))
    config = build_run_config(suites=["transformers"], device="cuda",
                              cli_options={"dtype": "fp16", "models": "tiny-bert"})
    assert {p.case.params["dtype"] for p in plan_cases(config)} == {"fp16"}
