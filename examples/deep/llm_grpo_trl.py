"""
GRPO with VisualScore's rewards and advantages in TRL
=====================================================

Not run when the site is built (it trains a language model). Point it at a
causal LM on the Hugging Face hub or on disk::

    pip install torch==2.13.0 && pip install "mvlearn_ext[llm]"
    python examples/deep/llm_grpo_trl.py --model Qwen/Qwen2.5-0.5B-Instruct --steps 50

``--model`` takes a hub name or a directory written by ``save_pretrained``
(model and tokenizer, the tokenizer with a chat template): TRL loads both
with ``from_pretrained``. ``tests/llm/test_example_real_model.py`` runs
this path end to end on a tiny random model saved to a temporary directory.

The task is VisualScore's answer format on a toy: each prompt asks for a
score in ``<think>...</think><answer>s</answer>``; the rewards are the
Gaussian accuracy reward of the answer against the prompt's score and the
format reward (0.5), the advantages GRPO's with VisualScore's std filter on
the accuracy reward, and the entropy gating keeps the top 20% of token
entropies in every sequence. ``--tiny`` runs the same trainer on a
random-weight model built locally (no download; the reward then is on the
first word, see ``tests/llm/test_rl_trl.py``) and prints the mean reward of
the first and last steps.
"""

import argparse
import os

import numpy as np


def tiny_run(steps, seed):
    from datasets import Dataset
    from trl import GRPOConfig

    from mvlearn_ext.deep.rl_trl import (
        FormatReward,
        GaussianScoreReward,
        MVGRPOTrainer,
        tiny_causal_lm,
    )

    model, tok = tiny_causal_lm([str(i) for i in range(10)] + ["q"], random_state=seed)
    data = Dataset.from_dict({"prompt": ["q"] * 256, "score": [7.0] * 256})
    rewards = [
        GaussianScoreReward(sigma=2.0, pattern=r"^\s*(\S+)"),
        FormatReward(value=0.1, pattern=r"^\s*\d"),
    ]
    args = GRPOConfig(
        output_dir="grpo-tiny",
        per_device_train_batch_size=8,
        num_generations=8,
        max_completion_length=4,
        learning_rate=3e-2,
        max_steps=steps,
        reward_weights=[1.0, 0.5],
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        beta=0.0,
        seed=seed,
        logging_steps=steps,
    )
    trainer = MVGRPOTrainer(
        model=model, reward_funcs=rewards, args=args, train_dataset=data, processing_class=tok
    )
    trainer.train()
    gauss = np.array([R[:, 0].mean() for R in trainer.reward_history_])
    print(f"Gaussian reward, mean of steps 1-2: {gauss[:2].mean():.3f}")
    print(f"Gaussian reward, mean of the last 2 steps: {gauss[-2:].mean():.3f}")


def real_run(model_name, steps, seed, *, max_completion_length=96, batch_size=8, output_dir=None):
    """GRPO on ``model_name``, a hub name or a local path (TRL calls ``from_pretrained``)."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig

    from mvlearn_ext.deep.rl_trl import (
        FormatReward,
        GaussianScoreReward,
        MVGRPOTrainer,
        VisualScoreAdvantages,
    )

    rng = np.random.default_rng(seed)
    scores = rng.uniform(1, 5, size=256).round(1)
    prompts = [
        [
            {
                "role": "user",
                "content": (
                    f"An image's sharpness is {s} on a scale of 1 to 5. Think, then give "
                    "its score as <think>...</think><answer>score</answer>."
                ),
            }
        ]
        for s in scores
    ]
    data = Dataset.from_dict({"prompt": prompts, "score": scores.tolist()})
    # TRL defaults to bf16, which transformers refuses on a machine without a GPU unless told
    # to use the CPU: there, train on the CPU in float32
    on_cpu = {} if torch.cuda.is_available() else {"use_cpu": True, "bf16": False}
    args = GRPOConfig(
        output_dir=output_dir or "grpo-visualscore",
        per_device_train_batch_size=batch_size,
        num_generations=batch_size,
        max_completion_length=max_completion_length,
        learning_rate=1e-6,
        max_steps=steps,
        top_entropy_quantile=0.2,
        beta=0.001,
        report_to="none",
        seed=seed,
        logging_steps=5,
        **on_cpu,
    )
    trainer = MVGRPOTrainer(
        model=model_name,
        reward_funcs=[GaussianScoreReward(sigma=0.8), FormatReward(value=0.5)],
        args=args,
        train_dataset=data,
        advantage_fn=VisualScoreAdvantages(watch=0, threshold=1e-3),
        entropy_scope="sequence",
    )
    trainer.train()
    gauss = np.array([R[:, 0].mean() for R in trainer.reward_history_])
    print(f"Gaussian reward: first step {gauss[0]:.3f}, last step {gauss[-1]:.3f}")
    return trainer


def main(argv=None):
    parser = argparse.ArgumentParser(description="GRPO with VisualScore's rewards in TRL")
    parser.add_argument("--model", help="a causal LM name on the hub, or a local path")
    parser.add_argument("--tiny", action="store_true", help="a random-weight local model")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-completion-length", type=int, default=96)
    parser.add_argument("--batch-size", type=int, default=8, help="= generations per prompt")
    parser.add_argument("--output-dir", default="grpo-visualscore")
    args = parser.parse_args(argv)
    if args.tiny:
        os.environ["HF_HUB_OFFLINE"] = "1"
        tiny_run(args.steps, args.seed)
    elif args.model:
        return real_run(
            args.model,
            args.steps,
            args.seed,
            max_completion_length=args.max_completion_length,
            batch_size=args.batch_size,
            output_dir=args.output_dir,
        )
    else:
        parser.error("give --model NAME or --tiny")


if __name__ == "__main__":
    main()
