"""MaskablePPO's actor-critic with a lean forward pass for collecting rollouts.

During a rollout MaskablePPO calls ``policy(obs, action_masks=masks)`` once per vectorised step. The stock
forward builds a ``MaskableCategorical`` (a torch ``Distribution`` with argument validation), masks it,
samples and asks it for the log-probability: several times the cost of the two small matrix products
themselves (19-26% of a training run in issue 15's profile). :class:`LeanMaskablePolicy` computes the
same thing directly under ``torch.inference_mode``:

    latent_pi, latent_vf = mlp_extractor(obs)
    logits   = where(mask, action_net(latent_pi), -1e8)     # SB3's HUGE_NEG, so the same numbers
    log_pi   = logits - logsumexp(logits)                   # the masked distribution's log-probabilities
    action   = multinomial(exp(log_pi))   or argmax when deterministic
    returns    action, value_net(latent_vf), log_pi[action]

The modules (and so the ``state_dict``, ``model.zip`` and ``policy_from_sb3``) are exactly those of
``MaskableActorCriticPolicy``; only the rollout forward is replaced. When gradients are on (someone
trains through ``forward``) the stock forward runs instead.

The PPO update's ``evaluate_actions`` is lean the same way: SB3's builds a ``MaskableCategorical`` per
minibatch (argument checks, masking, normalisation and probabilities each a pass of their own: a sixth of
the update at MiniSteel's 256 x 256, docs/performance.md); this one computes the same log-probabilities
and entropy from the masked logits, with gradients, in the operations the distribution uses:

    log_pi   = logits - logsumexp(logits)                   # MaskableCategorical's normalised logits
    log_prob = log_pi[action]
    entropy  = -sum over legal actions of log_pi * softmax(log_pi)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor

# The logit SB3's MaskableCategorical gives a masked action: the log-probabilities match it exactly.
MASKED_LOGIT = -1e8


class LeanMaskablePolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` whose gradient-free ``forward`` skips the distribution objects."""

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: np.ndarray | torch.Tensor | None = None):
        if torch.is_grad_enabled() or not self.share_features_extractor:
            return super().forward(obs, deterministic, action_masks)
        with torch.inference_mode():
            logits, values = self.masked_logits_and_values(obs, action_masks)
            log_pi = logits - torch.logsumexp(logits, dim=1, keepdim=True)
            if deterministic:
                actions = log_pi.argmax(dim=1)
            else:
                actions = torch.multinomial(log_pi.exp(), 1).squeeze(1)
            log_prob = log_pi.gather(1, actions.unsqueeze(1)).squeeze(1)
        return actions, values, log_prob

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: np.ndarray | torch.Tensor | None = None):
        """Values, log-probabilities of ``actions`` and entropies, as SB3's ``evaluate_actions`` gives them
        (module docstring), without the distribution objects."""
        if not self.share_features_extractor or action_masks is None:
            return super().evaluate_actions(obs, actions, action_masks)
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        logits = self.action_net(latent_pi)
        masks = torch.as_tensor(action_masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
        logits = torch.where(masks, logits, torch.tensor(MASKED_LOGIT, dtype=logits.dtype))
        log_pi = logits - logits.logsumexp(dim=1, keepdim=True)
        log_prob = log_pi.gather(1, actions.long().reshape(-1, 1)).squeeze(1)
        p_log_p = torch.where(masks, log_pi * torch.softmax(log_pi, dim=1), torch.tensor(0.0, dtype=logits.dtype))
        return self.value_net(latent_vf), log_prob, -p_log_p.sum(dim=1)

    def masked_logits_and_values(self, obs: torch.Tensor, action_masks: np.ndarray | torch.Tensor | None):
        """Logits with masked actions at ``MASKED_LOGIT`` (shape (batch, actions)) and values (batch, 1)."""
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        logits = self.action_net(latent_pi)
        if action_masks is not None:
            masks = torch.as_tensor(action_masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
            logits = torch.where(masks, logits, torch.tensor(MASKED_LOGIT, dtype=logits.dtype))
        return logits, self.value_net(latent_vf)


class OwnViewActor(MlpExtractor):
    """SB3's MlpExtractor whose actor reads only the first ``own_size`` features (the seat's own
    observation) while the critic reads them all (the other seats' observations too): the asymmetric
    actor-critic of perfect-training-imperfect-execution. The actor's layers are an ordinary actor's for
    an ``own_size`` observation, so the saved policy (``policy_from_sb3``) is a bot like any other."""

    def __init__(self, feature_dim: int, net_arch: Any, activation_fn: type, device: Any, own_size: int):
        super().__init__(feature_dim, net_arch, activation_fn, device)
        self.own_size = own_size
        self.policy_net = MlpExtractor(own_size, net_arch, activation_fn, device).policy_net

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[:, :self.own_size])


class PrivilegedCriticPolicy(LeanMaskablePolicy):
    """:class:`LeanMaskablePolicy` with :class:`OwnViewActor`: ``TrainConfig.privileged_critic``. The
    observation is the seat's own (``own_size`` values) followed by the other seats'
    (train/selfplay.py ``LearnerSeat.observe_learner``)."""

    def __init__(self, *args: Any, own_size: int, **kwargs: Any):
        self.own_size = own_size
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = OwnViewActor(self.features_dim, self.net_arch, self.activation_fn, self.device,
                                          self.own_size)


class TorchActor:
    """An :class:`~tavernzoo.agents.policy.MLPPolicy` evaluated with torch, for wide batches in training.

    Same weights, same ``act`` (masked argmax, or Gumbel-max sampling from the numpy generator given), but
    the matrix products run on torch's thread pool (``torch.set_num_threads``, one thread in training)
    instead of numpy's OpenBLAS, which on a busy 2-core machine spreads a 64 x 128 product over threads
    that wait for each other: 7 ms instead of 0.2 ms per call (docs/performance.md).
    """

    def __init__(self, policy: Any):
        self.policy = policy
        self._weights = [torch.as_tensor(np.asarray(w, dtype=np.float32)) for w in policy.weights]
        self._biases = [torch.as_tensor(np.asarray(b, dtype=np.float32)) for b in policy.biases]
        self._activate = {"tanh": torch.tanh, "relu": torch.relu}[policy.activation]

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Logits for a batch of observations, shape (batch, num_actions), as ``MLPPolicy.logits``."""
        with torch.inference_mode():
            x = torch.as_tensor(np.asarray(observations, dtype=np.float32))
            last = len(self._weights) - 1
            for i, (weight, bias) in enumerate(zip(self._weights, self._biases, strict=True)):
                x = torch.nn.functional.linear(x, weight, bias)
                if i < last:
                    x = self._activate(x)
            return x.numpy()

    def act(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None,
            deterministic: bool = True) -> np.ndarray:
        """One legal action per row, exactly as ``MLPPolicy.act`` chooses it from these logits."""
        return self.policy.choose(self.logits(observations), masks, rng, deterministic)
