"""The models, data and update rule of real data-parallel training, shared by
the gradient recorder (record_gradients.py) and closed-loop training
(train_live.py).

Models, after the three families of the sparse-allreduce papers:
  cnn          a small VGG-like convnet (3x3 convolutions, batch norm, two
               max-pools, two fully connected layers) on scikit-learn's bundled
               8x8 digits, with random one-pixel shifts as augmentation
  lstm         a character-level LSTM language model on the licence texts in
               /usr/share/common-licenses
  transformer  a BERT-like encoder trained by masked-token prediction on the
               same texts, with word-level tokens and the output projection
               tied to the token embedding

Each task draws the workers' shards, gives a shard's loss and evaluates the
model on its held-out part; apply_update() turns one aggregated gradient into
the SGD step (momentum 0.9; clipping and warm-up where the family has them).
Every random stream is the task's own generator or torch's seeded one, so one
seed gives one run.
"""

import collections
import math
import os
import re
import signal
import sys

# Torch's OpenMP threads wait for work without spinning: spinning threads slow a
# run down many times over when the cores are shared with other processes.  This
# has to be set before torch is loaded; a value in the environment wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

LICENSE_DIR = "/usr/share/common-licenses"
MOMENTUM = 0.9
TEST_FRACTION = 0.1          # the last 10% of the text (or of the digits) is held out
EVAL_SEED = 20240601         # fixed masks for the transformer's test loss

class RunFailed(Exception):
    """The run could not go on (missing data, diverged training): exit status 1."""


class UsageError(Exception):
    """Bad input: reported as one line on stderr with exit status 2."""


class Terminated(Exception):
    """SIGTERM or SIGHUP arrived; the run stops and removes its temporaries."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def task_args(args):
    """--batch and --lr from the model's defaults where not given, and the
    checks every training command makes of them and of --seed."""
    if args.batch is None:
        args.batch = DEFAULTS[args.model]["batch"]
    if args.batch < 1:
        raise UsageError("--batch must be at least 1")
    if args.lr is None:
        args.lr = DEFAULTS[args.model]["lr"]
    if not (math.isfinite(args.lr) and args.lr > 0):
        raise UsageError("--lr must be a positive number")
    if not 0 <= args.seed < 2 ** 32:
        raise UsageError("--seed must be in 0..4294967295")


def worker_gradients(task, model, params, grads, batch, it):
    """Every worker's gradient of the loss on its own shard of the next
    mini-batches, flattened into the rows of grads; their mean loss.  A loss
    or a gradient that is not finite ends the run."""
    model.train()
    losses = []
    for w, shard in enumerate(task.draw(grads.shape[0], batch)):
        model.zero_grad(set_to_none=True)
        loss = task.loss(shard)
        loss.backward()
        flatten_into(params, grads[w])
        losses.append(loss.item())
    mean_loss = float(np.mean(losses))
    if not math.isfinite(mean_loss) or not torch.isfinite(grads).all():
        raise RunFailed(f"training diverged at iteration {it} (loss {mean_loss}); try a smaller --lr")
    return mean_loss


def command_main(prog, argv, parse_args, run, log_for, lost=""):
    """A training command's main: parse, run(args, log), and one line on stderr
    with the exit status for each way it can end (2 bad input, 1 a failed run,
    128 + the signal's number, 130 interrupted); `lost` says what an
    interrupted run leaves (for example "; no output written")."""
    def on_signal(signum, frame):
        raise Terminated(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        args = parse_args(argv)
        torch.set_num_threads(args.threads)
        torch.use_deterministic_algorithms(True)
        run(args, log_for(args))
        return 0
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted{lost}", file=sys.stderr)
        return 130
    except Terminated as e:
        print(f"{prog}: stopped by {e}{lost}", file=sys.stderr)
        return 128 + e.signum
    except (RunFailed, OSError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1



# ---------------------------------------------------------------------------
# Model sizes.  "tiny" is for tests (a few thousand parameters, seconds);
# "default" is 100k-500k parameters with a realistic mix of tensor sizes.

SIZES = {
    "cnn": {
        "tiny":    dict(width1=4, width2=8, hidden=16),
        "small":   dict(width1=16, width2=32, hidden=128),
        "default": dict(width1=32, width2=64, hidden=256),
    },
    "lstm": {
        "tiny":    dict(embed=8, hidden=16, layers=1),
        "small":   dict(embed=32, hidden=64, layers=2),
        "default": dict(embed=64, hidden=128, layers=2),
    },
    "transformer": {
        "tiny":    dict(dim=16, layers=1, heads=2, ff=32, vocab=128, seq=32),
        "small":   dict(dim=32, layers=2, heads=4, ff=128, vocab=512, seq=64),
        "default": dict(dim=64, layers=3, heads=4, ff=256, vocab=2048, seq=64),
    },
}

# Per-worker batch and learning rate when --batch / --lr are not given.
DEFAULTS = {
    "cnn":         dict(batch=16, lr=0.05),
    "lstm":        dict(batch=8, lr=1.0),
    "transformer": dict(batch=8, lr=0.1),
}

LSTM_SEQ = 32          # characters per training sequence
MAX_GRAD_NORM = 1.0    # the averaged gradient is clipped to this norm for lstm/transformer
WARMUP = 20            # iterations of linear learning-rate warm-up for the transformer


# ---------------------------------------------------------------------------
# cnn: VGG-like convnet on the 8x8 digits

class SmallVgg(nn.Module):
    """conv-bn-relu x2, max-pool, conv-bn-relu x2, max-pool, fc-relu, fc."""

    def __init__(self, width1, width2, hidden, classes=10):
        super().__init__()
        layers = collections.OrderedDict()
        channels = 1
        for block, width in ((1, width1), (2, width2)):
            for i in (1, 2):
                name = f"{block}_{i}"
                layers["conv" + name] = nn.Conv2d(channels, width, 3, padding=1, bias=False)
                layers["bn" + name] = nn.BatchNorm2d(width)
                layers["relu" + name] = nn.ReLU()
                channels = width
            layers[f"pool{block}"] = nn.MaxPool2d(2)
        self.features = nn.Sequential(layers)
        self.fc1 = nn.Linear(width2 * 2 * 2, hidden)   # 8x8 -> 4x4 -> 2x2
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        x = self.features(x).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


class DigitsTask:
    """Digits classification; the last 10% of the images are the test set."""

    name = "cnn"
    grad_clip = None     # no clipping of the averaged gradient
    warmup = 0           # no learning-rate warm-up

    def __init__(self, size, rng):
        from sklearn.datasets import load_digits
        digits = load_digits()
        images = digits.images.astype(np.float32) / 16.0     # (1797, 8, 8), in [0, 1]
        labels = digits.target.astype(np.int64)
        cut = int(round(len(images) * (1 - TEST_FRACTION)))
        self.train_x, self.train_y = images[:cut], labels[:cut]
        self.test_x, self.test_y = images[cut:], labels[cut:]
        self.mean = float(self.train_x.mean())
        self.std = float(self.train_x.std())
        self.rng = rng
        self.order = np.empty(0, dtype=np.int64)   # what is left of this epoch's shuffle
        self.model = SmallVgg(**SIZES["cnn"][size])

    def describe(self):
        return {"dataset": "sklearn digits, 8x8", "train_images": len(self.train_x),
                "test_images": len(self.test_x), "augmentation": "random shift by -1..1 pixel in x and y"}

    def _tensor(self, images):
        return torch.from_numpy((images - self.mean) / self.std).unsqueeze(1)

    def _shifted(self, images):
        """Each image moved by -1, 0 or +1 pixel in each direction, filled with background."""
        count = len(images)
        padded = np.zeros((count, 10, 10), dtype=np.float32)
        padded[:, 1:9, 1:9] = images
        rows = self.rng.integers(0, 3, count)[:, None] + np.arange(8)
        cols = self.rng.integers(0, 3, count)[:, None] + np.arange(8)
        return padded[np.arange(count)[:, None, None], rows[:, :, None], cols[:, None, :]]

    def draw(self, workers, batch):
        """One global batch of workers x batch images, drawn epoch by epoch, split in shards."""
        need = workers * batch
        while len(self.order) < need:
            self.order = np.concatenate([self.order, self.rng.permutation(len(self.train_x))])
        picked, self.order = self.order[:need], self.order[need:]
        shards = []
        for w in range(workers):
            idx = picked[w * batch:(w + 1) * batch]
            shards.append((self._tensor(self._shifted(self.train_x[idx])), torch.from_numpy(self.train_y[idx])))
        return shards

    def loss(self, shard):
        images, labels = shard
        return F.cross_entropy(self.model(images), labels)

    @torch.no_grad()
    def evaluate(self):
        logits = self.model(self._tensor(self.test_x))
        labels = torch.from_numpy(self.test_y)
        return {"test_loss": F.cross_entropy(logits, labels).item(),
                "test_accuracy": (logits.argmax(1) == labels).float().mean().item()}


# ---------------------------------------------------------------------------
# Licence texts, shared by lstm and transformer

def licence_text():
    """All licence files, sorted by name, one after the other.

    A symbolic link to another file of the directory (GPL -> GPL-3) is read once,
    under the first name, so that no text appears twice.
    """
    try:
        names = sorted(os.listdir(LICENSE_DIR))
    except OSError as e:
        raise RunFailed(f"cannot read {LICENSE_DIR}: {e.strerror}") from e
    seen, texts = set(), []
    for name in names:
        path = os.path.join(LICENSE_DIR, name)
        real = os.path.realpath(path)
        if real in seen or not os.path.isfile(real):
            continue
        seen.add(real)
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read())
    if not texts:
        raise RunFailed(f"no licence texts in {LICENSE_DIR}")
    return "\n".join(texts)


def unigram_loss(train, targets, vocab):
    """Cross-entropy of the training part's token frequencies on the test targets:
    the loss of a model that ignores context, to compare the trained model with."""
    counts = np.bincount(train, minlength=vocab) + 0.5
    return float(-np.log(counts[targets] / counts.sum()).mean())


class CharLstm(nn.Module):
    def __init__(self, vocab, embed, hidden, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, chars):
        out, _ = self.lstm(self.embed(chars))
        return self.decoder(out)


class CharLmTask:
    """Next-character prediction; the last 10% of the text is the test set."""

    name = "lstm"
    grad_clip = MAX_GRAD_NORM
    warmup = 0

    def __init__(self, size, rng):
        text = licence_text()
        self.alphabet = sorted(set(text))
        index = {c: i for i, c in enumerate(self.alphabet)}
        codes = np.array([index[c] for c in text], dtype=np.int64)
        cut = int(len(codes) * (1 - TEST_FRACTION))
        self.train, self.test = codes[:cut], codes[cut:]
        self.rng = rng
        self.model = CharLstm(len(self.alphabet), **SIZES["lstm"][size])

    def describe(self):
        return {"dataset": LICENSE_DIR, "tokens": "characters", "vocabulary": len(self.alphabet),
                "train_chars": len(self.train), "test_chars": len(self.test), "sequence": LSTM_SEQ,
                "test_unigram_loss": unigram_loss(self.train, self._test_windows()[:, 1:].reshape(-1),
                                                  len(self.alphabet))}

    def _test_windows(self):
        """The test text in consecutive windows of LSTM_SEQ + 1 characters, overlapping by one."""
        count = (len(self.test) - 1) // LSTM_SEQ
        starts = np.arange(count) * LSTM_SEQ
        return self.test[starts[:, None] + np.arange(LSTM_SEQ + 1)]

    def draw(self, workers, batch):
        """Each worker gets `batch` windows of LSTM_SEQ + 1 characters at random places."""
        span = np.arange(LSTM_SEQ + 1)
        shards = []
        for _ in range(workers):
            starts = self.rng.integers(0, len(self.train) - LSTM_SEQ, batch)
            shards.append(torch.from_numpy(self.train[starts[:, None] + span]))
        return shards

    def loss(self, windows):
        """Mean cross-entropy of predicting each window's characters 1.. from those before."""
        logits = self.model(windows[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))

    @torch.no_grad()
    def evaluate(self):
        """Mean loss over every character of the test text, in windows as in training."""
        loss = self.loss(torch.from_numpy(self._test_windows())).item()
        return {"test_loss": loss, "test_bits_per_char": loss / math.log(2)}


# ---------------------------------------------------------------------------
# transformer: BERT-like masked-token prediction on words

WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")   # lower-cased words, numbers and single punctuation marks
UNK, MASK = 0, 1


class MaskedLm(nn.Module):
    """Token + position embeddings, post-norm encoder layers, BERT's prediction head.

    The output projection is tied to the token embedding (logits = h E^T + b), as
    in BERT, so that matrix gets the gradient of both its uses.
    """

    def __init__(self, vocab, dim, layers, heads, ff, seq):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(seq, dim)
        self.embed_norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, dim)
        self.head_norm = nn.LayerNorm(dim)
        self.out_bias = nn.Parameter(torch.zeros(vocab))
        for module in self.modules():          # BERT's initialisation
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for block in self.encoder.layers:     # the attention's packed q, k, v projection
            nn.init.normal_(block.self_attn.in_proj_weight, std=0.02)
            nn.init.zeros_(block.self_attn.in_proj_bias)

    def forward(self, tokens, where):
        """Logits for the positions where `where` is true."""
        positions = torch.arange(tokens.shape[1])
        x = self.embed_norm(self.tokens(tokens) + self.positions(positions))
        h = self.encoder(self.dropout(x))[where]
        h = self.head_norm(F.gelu(self.head(h)))
        return h @ self.tokens.weight.t() + self.out_bias


class MaskedLmTask:
    """Masked-token prediction on words; the last 10% of the tokens are the test set.

    The vocabulary is the training part's words seen at least twice, most frequent
    first, up to the size's limit; other words become [UNK].  15% of the positions
    of each sequence are predicted: 80% of them shown as [MASK], 10% as a random
    word, 10% unchanged.
    """

    name = "transformer"
    grad_clip = MAX_GRAD_NORM
    warmup = WARMUP

    def __init__(self, size, rng):
        config = dict(SIZES["transformer"][size])
        self.seq = config["seq"]
        words = WORD.findall(licence_text().lower())
        cut = int(len(words) * (1 - TEST_FRACTION))
        counts = collections.Counter(words[:cut])
        frequent = sorted((w for w, c in counts.items() if c >= 2), key=lambda w: (-counts[w], w))
        self.vocab = ["[UNK]", "[MASK]"] + frequent[:config["vocab"] - 2]
        index = {w: i for i, w in enumerate(self.vocab)}
        codes = np.array([index.get(w, UNK) for w in words], dtype=np.int64)
        self.train, self.test = codes[:cut], codes[cut:]
        self.rng = rng
        config["vocab"] = len(self.vocab)
        self.model = MaskedLm(**config)
        self.test_batch = self._masked(self._test_windows(), np.random.default_rng(EVAL_SEED))

    def describe(self):
        return {"dataset": LICENSE_DIR, "tokens": "words (lower case) and punctuation marks",
                "vocabulary": len(self.vocab), "train_tokens": len(self.train), "test_tokens": len(self.test),
                "unknown_fraction": float(np.mean(self.train == UNK)), "sequence": self.seq,
                "masking": "15% of positions: 80% [MASK], 10% random word, 10% unchanged",
                "output_projection": "tied to the token embedding, plus a bias",
                "test_unigram_loss": unigram_loss(self.train, self.test_batch[2].numpy(), len(self.vocab))}

    def _test_windows(self):
        """The test tokens in consecutive windows of self.seq."""
        count = len(self.test) // self.seq
        return self.test[:count * self.seq].reshape(count, self.seq)

    def _masked(self, windows, rng):
        """(inputs, where, targets): 15% of each row's positions chosen and corrupted."""
        rows, seq = windows.shape
        picks = max(1, int(round(0.15 * seq)))
        chosen = np.argsort(rng.random((rows, seq)), axis=1)[:, :picks]
        where = np.zeros((rows, seq), dtype=bool)
        where[np.arange(rows)[:, None], chosen] = True
        inputs = windows.copy()
        roll = rng.random((rows, seq))
        inputs[where & (roll < 0.8)] = MASK
        swap = where & (roll >= 0.8) & (roll < 0.9)
        inputs[swap] = rng.integers(2, len(self.vocab), int(swap.sum()))
        return torch.from_numpy(inputs), torch.from_numpy(where), torch.from_numpy(windows[where])

    def draw(self, workers, batch):
        """Each worker gets `batch` windows of self.seq words at random places, masked."""
        span = np.arange(self.seq)
        shards = []
        for _ in range(workers):
            starts = self.rng.integers(0, len(self.train) - self.seq + 1, batch)
            shards.append(self._masked(self.train[starts[:, None] + span], self.rng))
        return shards

    def loss(self, shard):
        inputs, where, targets = shard
        return F.cross_entropy(self.model(inputs, where), targets)

    @torch.no_grad()
    def evaluate(self):
        """Masked-token loss on the test text, always with the same masks."""
        inputs, where, targets = self.test_batch
        logits = self.model(inputs, where)
        return {"test_masked_loss": F.cross_entropy(logits, targets).item(),
                "test_masked_accuracy": (logits.argmax(1) == targets).float().mean().item()}


TASKS = {"cnn": DigitsTask, "lstm": CharLmTask, "transformer": MaskedLmTask}


# ---------------------------------------------------------------------------
# Training steps

def flatten_into(params, row):
    """Copy the parameters' gradients, in order, into one row of the gradient matrix."""
    offset = 0
    for p in params:
        size = p.numel()
        if p.grad is None:               # a parameter this batch did not reach
            row[offset:offset + size].zero_()
        else:
            row[offset:offset + size].copy_(p.grad.reshape(-1))
        offset += size


def layer_table(model):
    table, offset = [], 0
    for name, p in model.named_parameters():
        table.append({"name": name, "offset": offset, "size": p.numel(), "shape": list(p.shape)})
        offset += p.numel()
    return table


def apply_update(task, optimizer, params, update, it, lr):
    """One SGD step with the aggregated gradient `update` (flat, parameters in order):
    clipped to the family's norm, the learning rate warmed up where it has one."""
    offset = 0
    for p in params:
        p.grad = update[offset:offset + p.numel()].view_as(p).clone()
        offset += p.numel()
    if task.grad_clip:
        nn.utils.clip_grad_norm_(params, task.grad_clip)
    if task.warmup:
        for group in optimizer.param_groups:
            group["lr"] = lr * min(1.0, (it + 1) / task.warmup)
    optimizer.step()
