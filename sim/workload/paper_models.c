/* paper_models.c - the layer tables of the models of two sparse-allreduce
 * papers as the authors' code builds them, in the order their allreduce sees
 * the flattened gradient: the three of the Ok-Topk paper (Li & Hoefler, PPoPP
 * 2022) and the other four of the gTop-k paper (Shi et al., ICDCS 2019),
 * which trains vgg16 and lstm too.
 *
 * Read in the Ok-Topk authors' repository (Shigangli/Ok-Topk at 9763dcc):
 *  - vgg16: VGG/models/vgg.py, VGG('VGG16') for CIFAR-10: 13 blocks of a 3x3
 *    convolution with bias and a BatchNorm2d, then Linear(512, 10); 54 tensors,
 *    n = 14,728,266.  VGG/allreducer.py merges the gradients into one buffer
 *    in reverse parameter order (its 640M-element threshold exceeds n).
 *  - lstm: LSTM/models/lstman4.py, DeepSpeech-style: two convolutions with
 *    BatchNorm2d, 5 unidirectional LSTM layers of 800 (input 1312), BatchNorm1d
 *    before layers 1-4, a lookahead of context 20, BatchNorm1d and
 *    Linear(800, 29) without bias; 40 tensors, n = 27,569,568; the same
 *    reversed merge.
 *  - bert: BERT/bert, bert-base (12 layers, hidden 768, vocabulary 30522, 512
 *    positions) as four pipeline stages run data-parallel, whose masked-LM
 *    decoder is a parameter of its own (not tied to the word embeddings), with
 *    the next-sentence head and pooler; 207 tensors, n = 133,547,324.  Its
 *    optimizer concatenates the gradients by parameter group: first the 79
 *    tensors with weight decay, then the 128 biases and LayerNorm tensors.
 *
 * Read in the gTop-k authors' repository (hclhkbu/gtopkssgd): dl_trainer.py
 * says which class each --dnn name builds.  Its allreducer.py merges the
 * gradients as Ok-Topk's does: one buffer
 * in reverse order of named_parameters() while the running size stays under
 * 640M elements, which every model here does; so these tables are in reverse
 * parameter order too.  Its vgg16 (models/vgg.py) and lstman4 are the tables
 * above.
 *  - resnet20: models/resnet.py, CifarResNet of depth 20 for CIFAR-10: a 3x3
 *    convolution 3->16 without bias and a BatchNorm2d, three stages of three
 *    basic blocks (16, 32, 64 channels; two 3x3 convolutions without bias,
 *    each with a BatchNorm2d), Linear(64, 10).  The shortcut that halves the
 *    resolution (DownsampleA) is average pooling and zero channels, with no
 *    parameters; 59 tensors, n = 269,722 (He et al., CVPR 2016, Table 6:
 *    0.27M for the 20-layer CIFAR-10 network).
 *  - alexnet: dl_trainer.py builds torchvision.models.alexnet(), torchvision's
 *    single-tower variant (its documentation points to Krizhevsky, "One
 *    weird trick for parallelizing convolutional neural networks", 2014,
 *    with 64 and 256 channels where that paper has 384): convolutions
 *    64 11x11, 192 5x5, 384, 256, 256 3x3, all with bias, then Linear(9216,
 *    4096), Linear(4096, 4096), Linear(4096, 1000); no BatchNorm; 16 tensors,
 *    n = 61,100,840 (the repository's own models/alexnet.py is not the one
 *    used).
 *  - resnet50: models/imagenet_resnet.py, ResNet(Bottleneck, [3, 4, 6, 3])
 *    with 1000 classes: the torchvision layout (7x7 convolution, four stages
 *    of bottlenecks 1x1, 3x3, 1x1 without bias, each with a BatchNorm2d, a
 *    1x1 convolution and BatchNorm2d on the first block's shortcut, Linear
 *    (2048, 1000)), stride in the 3x3; 161 tensors, n = 25,557,032.
 *  - lstm-ptb: models/lstm.py on Penn Treebank: an Embedding of the
 *    vocabulary (10,000 words, ptb_reader.py's vocabulary of ptb.train.txt) to
 *    1500, nn.LSTM of 2 layers of 1500 (input 1500), and a decoder
 *    Linear(1500, 10000) of its own (embedding and decoder weights are not
 *    tied); 11 tensors, n = 66,034,000.  Kinds: the lstm family's trace holds
 *    an embedding kind, which the word embedding takes (only the rows of the
 *    words in a batch have a gradient, as that kind's share of zeros says);
 *    the decoder is linear_weight and linear_bias.
 * Tensor sizes sum to n exactly; kinds classify each tensor (the profile
 * gives each kind its own scale, spread and zeros: the cnn family's kinds for
 * resnet20, alexnet and resnet50, the lstm family's for lstm-ptb).
 */
#include "paper_models.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const sp_paper_layer vgg16_layers[] = {
    {"fc.bias", "linear_bias", 10},
    {"fc.weight", "linear_weight", 5120},
    {"features.41.bias", "bn_bias", 512},
    {"features.41.weight", "bn_weight", 512},
    {"features.40.bias", "conv_bias", 512},
    {"features.40.weight", "conv_weight", 2359296},
    {"features.38.bias", "bn_bias", 512},
    {"features.38.weight", "bn_weight", 512},
    {"features.37.bias", "conv_bias", 512},
    {"features.37.weight", "conv_weight", 2359296},
    {"features.35.bias", "bn_bias", 512},
    {"features.35.weight", "bn_weight", 512},
    {"features.34.bias", "conv_bias", 512},
    {"features.34.weight", "conv_weight", 2359296},
    {"features.31.bias", "bn_bias", 512},
    {"features.31.weight", "bn_weight", 512},
    {"features.30.bias", "conv_bias", 512},
    {"features.30.weight", "conv_weight", 2359296},
    {"features.28.bias", "bn_bias", 512},
    {"features.28.weight", "bn_weight", 512},
    {"features.27.bias", "conv_bias", 512},
    {"features.27.weight", "conv_weight", 2359296},
    {"features.25.bias", "bn_bias", 512},
    {"features.25.weight", "bn_weight", 512},
    {"features.24.bias", "conv_bias", 512},
    {"features.24.weight", "conv_weight", 1179648},
    {"features.21.bias", "bn_bias", 256},
    {"features.21.weight", "bn_weight", 256},
    {"features.20.bias", "conv_bias", 256},
    {"features.20.weight", "conv_weight", 589824},
    {"features.18.bias", "bn_bias", 256},
    {"features.18.weight", "bn_weight", 256},
    {"features.17.bias", "conv_bias", 256},
    {"features.17.weight", "conv_weight", 589824},
    {"features.15.bias", "bn_bias", 256},
    {"features.15.weight", "bn_weight", 256},
    {"features.14.bias", "conv_bias", 256},
    {"features.14.weight", "conv_weight", 294912},
    {"features.11.bias", "bn_bias", 128},
    {"features.11.weight", "bn_weight", 128},
    {"features.10.bias", "conv_bias", 128},
    {"features.10.weight", "conv_weight", 147456},
    {"features.8.bias", "bn_bias", 128},
    {"features.8.weight", "bn_weight", 128},
    {"features.7.bias", "conv_bias", 128},
    {"features.7.weight", "conv_weight", 73728},
    {"features.4.bias", "bn_bias", 64},
    {"features.4.weight", "bn_weight", 64},
    {"features.3.bias", "conv_bias", 64},
    {"features.3.weight", "conv_weight", 36864},
    {"features.1.bias", "bn_bias", 64},
    {"features.1.weight", "bn_weight", 64},
    {"features.0.bias", "conv_bias", 64},
    {"features.0.weight", "conv_weight", 1728},
};

static const sp_paper_layer lstm_layers[] = {
    {"fc.0.module.1.weight", "linear_weight", 23200},
    {"fc.0.module.0.bias", "bn_bias", 800},
    {"fc.0.module.0.weight", "bn_weight", 800},
    {"lookahead.0.weight", "other", 16800},
    {"rnns.4.rnn.bias_hh_l0", "lstm_bias", 3200},
    {"rnns.4.rnn.bias_ih_l0", "lstm_bias", 3200},
    {"rnns.4.rnn.weight_hh_l0", "lstm_weight_hh", 2560000},
    {"rnns.4.rnn.weight_ih_l0", "lstm_weight_ih", 2560000},
    {"rnns.4.batch_norm.module.bias", "bn_bias", 800},
    {"rnns.4.batch_norm.module.weight", "bn_weight", 800},
    {"rnns.3.rnn.bias_hh_l0", "lstm_bias", 3200},
    {"rnns.3.rnn.bias_ih_l0", "lstm_bias", 3200},
    {"rnns.3.rnn.weight_hh_l0", "lstm_weight_hh", 2560000},
    {"rnns.3.rnn.weight_ih_l0", "lstm_weight_ih", 2560000},
    {"rnns.3.batch_norm.module.bias", "bn_bias", 800},
    {"rnns.3.batch_norm.module.weight", "bn_weight", 800},
    {"rnns.2.rnn.bias_hh_l0", "lstm_bias", 3200},
    {"rnns.2.rnn.bias_ih_l0", "lstm_bias", 3200},
    {"rnns.2.rnn.weight_hh_l0", "lstm_weight_hh", 2560000},
    {"rnns.2.rnn.weight_ih_l0", "lstm_weight_ih", 2560000},
    {"rnns.2.batch_norm.module.bias", "bn_bias", 800},
    {"rnns.2.batch_norm.module.weight", "bn_weight", 800},
    {"rnns.1.rnn.bias_hh_l0", "lstm_bias", 3200},
    {"rnns.1.rnn.bias_ih_l0", "lstm_bias", 3200},
    {"rnns.1.rnn.weight_hh_l0", "lstm_weight_hh", 2560000},
    {"rnns.1.rnn.weight_ih_l0", "lstm_weight_ih", 2560000},
    {"rnns.1.batch_norm.module.bias", "bn_bias", 800},
    {"rnns.1.batch_norm.module.weight", "bn_weight", 800},
    {"rnns.0.rnn.bias_hh_l0", "lstm_bias", 3200},
    {"rnns.0.rnn.bias_ih_l0", "lstm_bias", 3200},
    {"rnns.0.rnn.weight_hh_l0", "lstm_weight_hh", 2560000},
    {"rnns.0.rnn.weight_ih_l0", "lstm_weight_ih", 4198400},
    {"conv.seq_module.4.bias", "bn_bias", 32},
    {"conv.seq_module.4.weight", "bn_weight", 32},
    {"conv.seq_module.3.bias", "conv_bias", 32},
    {"conv.seq_module.3.weight", "conv_weight", 236544},
    {"conv.seq_module.1.bias", "bn_bias", 32},
    {"conv.seq_module.1.weight", "bn_weight", 32},
    {"conv.seq_module.0.bias", "conv_bias", 32},
    {"conv.seq_module.0.weight", "conv_weight", 14432},
};

static const sp_paper_layer bert_layers[] = {
    {"module0.embedding_layer.word_embeddings.weight", "embedding", 23440896},
    {"module0.embedding_layer.position_embeddings.weight", "embedding", 393216},
    {"module0.embedding_layer.token_type_embeddings.weight", "embedding", 1536},
    {"module0.layers.0.attention.self.query.weight", "linear_weight", 589824},
    {"module0.layers.0.attention.self.key.weight", "linear_weight", 589824},
    {"module0.layers.0.attention.self.value.weight", "linear_weight", 589824},
    {"module0.layers.0.attention.output.dense.weight", "linear_weight", 589824},
    {"module0.layers.0.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module0.layers.0.output.dense.weight", "linear_weight", 2359296},
    {"module0.layers.1.attention.self.query.weight", "linear_weight", 589824},
    {"module0.layers.1.attention.self.key.weight", "linear_weight", 589824},
    {"module0.layers.1.attention.self.value.weight", "linear_weight", 589824},
    {"module0.layers.1.attention.output.dense.weight", "linear_weight", 589824},
    {"module0.layers.1.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module0.layers.1.output.dense.weight", "linear_weight", 2359296},
    {"module0.layers.2.attention.self.query.weight", "linear_weight", 589824},
    {"module0.layers.2.attention.self.key.weight", "linear_weight", 589824},
    {"module0.layers.2.attention.self.value.weight", "linear_weight", 589824},
    {"module0.layers.2.attention.output.dense.weight", "linear_weight", 589824},
    {"module0.layers.2.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module0.layers.2.output.dense.weight", "linear_weight", 2359296},
    {"module1.layers.0.attention.self.query.weight", "linear_weight", 589824},
    {"module1.layers.0.attention.self.key.weight", "linear_weight", 589824},
    {"module1.layers.0.attention.self.value.weight", "linear_weight", 589824},
    {"module1.layers.0.attention.output.dense.weight", "linear_weight", 589824},
    {"module1.layers.0.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module1.layers.0.output.dense.weight", "linear_weight", 2359296},
    {"module1.layers.1.attention.self.query.weight", "linear_weight", 589824},
    {"module1.layers.1.attention.self.key.weight", "linear_weight", 589824},
    {"module1.layers.1.attention.self.value.weight", "linear_weight", 589824},
    {"module1.layers.1.attention.output.dense.weight", "linear_weight", 589824},
    {"module1.layers.1.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module1.layers.1.output.dense.weight", "linear_weight", 2359296},
    {"module1.layers.2.attention.self.query.weight", "linear_weight", 589824},
    {"module1.layers.2.attention.self.key.weight", "linear_weight", 589824},
    {"module1.layers.2.attention.self.value.weight", "linear_weight", 589824},
    {"module1.layers.2.attention.output.dense.weight", "linear_weight", 589824},
    {"module1.layers.2.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module1.layers.2.output.dense.weight", "linear_weight", 2359296},
    {"module2.layers.0.attention.self.query.weight", "linear_weight", 589824},
    {"module2.layers.0.attention.self.key.weight", "linear_weight", 589824},
    {"module2.layers.0.attention.self.value.weight", "linear_weight", 589824},
    {"module2.layers.0.attention.output.dense.weight", "linear_weight", 589824},
    {"module2.layers.0.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module2.layers.0.output.dense.weight", "linear_weight", 2359296},
    {"module2.layers.1.attention.self.query.weight", "linear_weight", 589824},
    {"module2.layers.1.attention.self.key.weight", "linear_weight", 589824},
    {"module2.layers.1.attention.self.value.weight", "linear_weight", 589824},
    {"module2.layers.1.attention.output.dense.weight", "linear_weight", 589824},
    {"module2.layers.1.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module2.layers.1.output.dense.weight", "linear_weight", 2359296},
    {"module2.layers.2.attention.self.query.weight", "linear_weight", 589824},
    {"module2.layers.2.attention.self.key.weight", "linear_weight", 589824},
    {"module2.layers.2.attention.self.value.weight", "linear_weight", 589824},
    {"module2.layers.2.attention.output.dense.weight", "linear_weight", 589824},
    {"module2.layers.2.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module2.layers.2.output.dense.weight", "linear_weight", 2359296},
    {"module3.layers.0.attention.self.query.weight", "linear_weight", 589824},
    {"module3.layers.0.attention.self.key.weight", "linear_weight", 589824},
    {"module3.layers.0.attention.self.value.weight", "linear_weight", 589824},
    {"module3.layers.0.attention.output.dense.weight", "linear_weight", 589824},
    {"module3.layers.0.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module3.layers.0.output.dense.weight", "linear_weight", 2359296},
    {"module3.layers.1.attention.self.query.weight", "linear_weight", 589824},
    {"module3.layers.1.attention.self.key.weight", "linear_weight", 589824},
    {"module3.layers.1.attention.self.value.weight", "linear_weight", 589824},
    {"module3.layers.1.attention.output.dense.weight", "linear_weight", 589824},
    {"module3.layers.1.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module3.layers.1.output.dense.weight", "linear_weight", 2359296},
    {"module3.layers.2.attention.self.query.weight", "linear_weight", 589824},
    {"module3.layers.2.attention.self.key.weight", "linear_weight", 589824},
    {"module3.layers.2.attention.self.value.weight", "linear_weight", 589824},
    {"module3.layers.2.attention.output.dense.weight", "linear_weight", 589824},
    {"module3.layers.2.intermediate.dense_act.weight", "linear_weight", 2359296},
    {"module3.layers.2.output.dense.weight", "linear_weight", 2359296},
    {"module3.pooling_layer.dense_act.weight", "linear_weight", 589824},
    {"module3.pre_training_heads_layer.predictions.transform.dense_act.weight", "linear_weight", 589824},
    {"module3.pre_training_heads_layer.predictions.decoder.weight", "linear_weight", 23440896},
    {"module3.pre_training_heads_layer.seq_relationship.weight", "linear_weight", 1536},
    {"module0.embedding_layer.LayerNorm.weight", "layernorm_weight", 768},
    {"module0.embedding_layer.LayerNorm.bias", "layernorm_bias", 768},
    {"module0.layers.0.attention.self.query.bias", "linear_bias", 768},
    {"module0.layers.0.attention.self.key.bias", "linear_bias", 768},
    {"module0.layers.0.attention.self.value.bias", "linear_bias", 768},
    {"module0.layers.0.attention.output.dense.bias", "linear_bias", 768},
    {"module0.layers.0.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module0.layers.0.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module0.layers.0.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module0.layers.0.output.dense.bias", "linear_bias", 768},
    {"module0.layers.0.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module0.layers.0.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module0.layers.1.attention.self.query.bias", "linear_bias", 768},
    {"module0.layers.1.attention.self.key.bias", "linear_bias", 768},
    {"module0.layers.1.attention.self.value.bias", "linear_bias", 768},
    {"module0.layers.1.attention.output.dense.bias", "linear_bias", 768},
    {"module0.layers.1.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module0.layers.1.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module0.layers.1.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module0.layers.1.output.dense.bias", "linear_bias", 768},
    {"module0.layers.1.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module0.layers.1.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module0.layers.2.attention.self.query.bias", "linear_bias", 768},
    {"module0.layers.2.attention.self.key.bias", "linear_bias", 768},
    {"module0.layers.2.attention.self.value.bias", "linear_bias", 768},
    {"module0.layers.2.attention.output.dense.bias", "linear_bias", 768},
    {"module0.layers.2.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module0.layers.2.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module0.layers.2.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module0.layers.2.output.dense.bias", "linear_bias", 768},
    {"module0.layers.2.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module0.layers.2.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module1.layers.0.attention.self.query.bias", "linear_bias", 768},
    {"module1.layers.0.attention.self.key.bias", "linear_bias", 768},
    {"module1.layers.0.attention.self.value.bias", "linear_bias", 768},
    {"module1.layers.0.attention.output.dense.bias", "linear_bias", 768},
    {"module1.layers.0.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module1.layers.0.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module1.layers.0.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module1.layers.0.output.dense.bias", "linear_bias", 768},
    {"module1.layers.0.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module1.layers.0.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module1.layers.1.attention.self.query.bias", "linear_bias", 768},
    {"module1.layers.1.attention.self.key.bias", "linear_bias", 768},
    {"module1.layers.1.attention.self.value.bias", "linear_bias", 768},
    {"module1.layers.1.attention.output.dense.bias", "linear_bias", 768},
    {"module1.layers.1.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module1.layers.1.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module1.layers.1.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module1.layers.1.output.dense.bias", "linear_bias", 768},
    {"module1.layers.1.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module1.layers.1.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module1.layers.2.attention.self.query.bias", "linear_bias", 768},
    {"module1.layers.2.attention.self.key.bias", "linear_bias", 768},
    {"module1.layers.2.attention.self.value.bias", "linear_bias", 768},
    {"module1.layers.2.attention.output.dense.bias", "linear_bias", 768},
    {"module1.layers.2.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module1.layers.2.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module1.layers.2.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module1.layers.2.output.dense.bias", "linear_bias", 768},
    {"module1.layers.2.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module1.layers.2.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module2.layers.0.attention.self.query.bias", "linear_bias", 768},
    {"module2.layers.0.attention.self.key.bias", "linear_bias", 768},
    {"module2.layers.0.attention.self.value.bias", "linear_bias", 768},
    {"module2.layers.0.attention.output.dense.bias", "linear_bias", 768},
    {"module2.layers.0.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module2.layers.0.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module2.layers.0.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module2.layers.0.output.dense.bias", "linear_bias", 768},
    {"module2.layers.0.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module2.layers.0.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module2.layers.1.attention.self.query.bias", "linear_bias", 768},
    {"module2.layers.1.attention.self.key.bias", "linear_bias", 768},
    {"module2.layers.1.attention.self.value.bias", "linear_bias", 768},
    {"module2.layers.1.attention.output.dense.bias", "linear_bias", 768},
    {"module2.layers.1.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module2.layers.1.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module2.layers.1.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module2.layers.1.output.dense.bias", "linear_bias", 768},
    {"module2.layers.1.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module2.layers.1.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module2.layers.2.attention.self.query.bias", "linear_bias", 768},
    {"module2.layers.2.attention.self.key.bias", "linear_bias", 768},
    {"module2.layers.2.attention.self.value.bias", "linear_bias", 768},
    {"module2.layers.2.attention.output.dense.bias", "linear_bias", 768},
    {"module2.layers.2.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module2.layers.2.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module2.layers.2.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module2.layers.2.output.dense.bias", "linear_bias", 768},
    {"module2.layers.2.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module2.layers.2.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.layers.0.attention.self.query.bias", "linear_bias", 768},
    {"module3.layers.0.attention.self.key.bias", "linear_bias", 768},
    {"module3.layers.0.attention.self.value.bias", "linear_bias", 768},
    {"module3.layers.0.attention.output.dense.bias", "linear_bias", 768},
    {"module3.layers.0.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module3.layers.0.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.layers.0.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module3.layers.0.output.dense.bias", "linear_bias", 768},
    {"module3.layers.0.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module3.layers.0.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.layers.1.attention.self.query.bias", "linear_bias", 768},
    {"module3.layers.1.attention.self.key.bias", "linear_bias", 768},
    {"module3.layers.1.attention.self.value.bias", "linear_bias", 768},
    {"module3.layers.1.attention.output.dense.bias", "linear_bias", 768},
    {"module3.layers.1.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module3.layers.1.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.layers.1.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module3.layers.1.output.dense.bias", "linear_bias", 768},
    {"module3.layers.1.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module3.layers.1.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.layers.2.attention.self.query.bias", "linear_bias", 768},
    {"module3.layers.2.attention.self.key.bias", "linear_bias", 768},
    {"module3.layers.2.attention.self.value.bias", "linear_bias", 768},
    {"module3.layers.2.attention.output.dense.bias", "linear_bias", 768},
    {"module3.layers.2.attention.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module3.layers.2.attention.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.layers.2.intermediate.dense_act.bias", "linear_bias", 3072},
    {"module3.layers.2.output.dense.bias", "linear_bias", 768},
    {"module3.layers.2.output.LayerNorm.weight", "layernorm_weight", 768},
    {"module3.layers.2.output.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.pooling_layer.dense_act.bias", "linear_bias", 768},
    {"module3.pre_training_heads_layer.predictions.bias", "linear_bias", 30522},
    {"module3.pre_training_heads_layer.predictions.transform.dense_act.bias", "linear_bias", 768},
    {"module3.pre_training_heads_layer.predictions.transform.LayerNorm.weight", "layernorm_weight", 768},
    {"module3.pre_training_heads_layer.predictions.transform.LayerNorm.bias", "layernorm_bias", 768},
    {"module3.pre_training_heads_layer.seq_relationship.bias", "linear_bias", 2},
};

static const sp_paper_layer resnet20_layers[] = {
    {"classifier.bias", "linear_bias", 10},
    {"classifier.weight", "linear_weight", 640},
    {"stage_3.2.bn_b.bias", "bn_bias", 64},
    {"stage_3.2.bn_b.weight", "bn_weight", 64},
    {"stage_3.2.conv_b.weight", "conv_weight", 36864},
    {"stage_3.2.bn_a.bias", "bn_bias", 64},
    {"stage_3.2.bn_a.weight", "bn_weight", 64},
    {"stage_3.2.conv_a.weight", "conv_weight", 36864},
    {"stage_3.1.bn_b.bias", "bn_bias", 64},
    {"stage_3.1.bn_b.weight", "bn_weight", 64},
    {"stage_3.1.conv_b.weight", "conv_weight", 36864},
    {"stage_3.1.bn_a.bias", "bn_bias", 64},
    {"stage_3.1.bn_a.weight", "bn_weight", 64},
    {"stage_3.1.conv_a.weight", "conv_weight", 36864},
    {"stage_3.0.bn_b.bias", "bn_bias", 64},
    {"stage_3.0.bn_b.weight", "bn_weight", 64},
    {"stage_3.0.conv_b.weight", "conv_weight", 36864},
    {"stage_3.0.bn_a.bias", "bn_bias", 64},
    {"stage_3.0.bn_a.weight", "bn_weight", 64},
    {"stage_3.0.conv_a.weight", "conv_weight", 18432},
    {"stage_2.2.bn_b.bias", "bn_bias", 32},
    {"stage_2.2.bn_b.weight", "bn_weight", 32},
    {"stage_2.2.conv_b.weight", "conv_weight", 9216},
    {"stage_2.2.bn_a.bias", "bn_bias", 32},
    {"stage_2.2.bn_a.weight", "bn_weight", 32},
    {"stage_2.2.conv_a.weight", "conv_weight", 9216},
    {"stage_2.1.bn_b.bias", "bn_bias", 32},
    {"stage_2.1.bn_b.weight", "bn_weight", 32},
    {"stage_2.1.conv_b.weight", "conv_weight", 9216},
    {"stage_2.1.bn_a.bias", "bn_bias", 32},
    {"stage_2.1.bn_a.weight", "bn_weight", 32},
    {"stage_2.1.conv_a.weight", "conv_weight", 9216},
    {"stage_2.0.bn_b.bias", "bn_bias", 32},
    {"stage_2.0.bn_b.weight", "bn_weight", 32},
    {"stage_2.0.conv_b.weight", "conv_weight", 9216},
    {"stage_2.0.bn_a.bias", "bn_bias", 32},
    {"stage_2.0.bn_a.weight", "bn_weight", 32},
    {"stage_2.0.conv_a.weight", "conv_weight", 4608},
    {"stage_1.2.bn_b.bias", "bn_bias", 16},
    {"stage_1.2.bn_b.weight", "bn_weight", 16},
    {"stage_1.2.conv_b.weight", "conv_weight", 2304},
    {"stage_1.2.bn_a.bias", "bn_bias", 16},
    {"stage_1.2.bn_a.weight", "bn_weight", 16},
    {"stage_1.2.conv_a.weight", "conv_weight", 2304},
    {"stage_1.1.bn_b.bias", "bn_bias", 16},
    {"stage_1.1.bn_b.weight", "bn_weight", 16},
    {"stage_1.1.conv_b.weight", "conv_weight", 2304},
    {"stage_1.1.bn_a.bias", "bn_bias", 16},
    {"stage_1.1.bn_a.weight", "bn_weight", 16},
    {"stage_1.1.conv_a.weight", "conv_weight", 2304},
    {"stage_1.0.bn_b.bias", "bn_bias", 16},
    {"stage_1.0.bn_b.weight", "bn_weight", 16},
    {"stage_1.0.conv_b.weight", "conv_weight", 2304},
    {"stage_1.0.bn_a.bias", "bn_bias", 16},
    {"stage_1.0.bn_a.weight", "bn_weight", 16},
    {"stage_1.0.conv_a.weight", "conv_weight", 2304},
    {"bn_1.bias", "bn_bias", 16},
    {"bn_1.weight", "bn_weight", 16},
    {"conv_1_3x3.weight", "conv_weight", 432},
};

static const sp_paper_layer alexnet_layers[] = {
    {"classifier.6.bias", "linear_bias", 1000},
    {"classifier.6.weight", "linear_weight", 4096000},
    {"classifier.4.bias", "linear_bias", 4096},
    {"classifier.4.weight", "linear_weight", 16777216},
    {"classifier.1.bias", "linear_bias", 4096},
    {"classifier.1.weight", "linear_weight", 37748736},
    {"features.10.bias", "conv_bias", 256},
    {"features.10.weight", "conv_weight", 589824},
    {"features.8.bias", "conv_bias", 256},
    {"features.8.weight", "conv_weight", 884736},
    {"features.6.bias", "conv_bias", 384},
    {"features.6.weight", "conv_weight", 663552},
    {"features.3.bias", "conv_bias", 192},
    {"features.3.weight", "conv_weight", 307200},
    {"features.0.bias", "conv_bias", 64},
    {"features.0.weight", "conv_weight", 23232},
};

static const sp_paper_layer resnet50_layers[] = {
    {"fc.bias", "linear_bias", 1000},
    {"fc.weight", "linear_weight", 2048000},
    {"layer4.2.bn3.bias", "bn_bias", 2048},
    {"layer4.2.bn3.weight", "bn_weight", 2048},
    {"layer4.2.conv3.weight", "conv_weight", 1048576},
    {"layer4.2.bn2.bias", "bn_bias", 512},
    {"layer4.2.bn2.weight", "bn_weight", 512},
    {"layer4.2.conv2.weight", "conv_weight", 2359296},
    {"layer4.2.bn1.bias", "bn_bias", 512},
    {"layer4.2.bn1.weight", "bn_weight", 512},
    {"layer4.2.conv1.weight", "conv_weight", 1048576},
    {"layer4.1.bn3.bias", "bn_bias", 2048},
    {"layer4.1.bn3.weight", "bn_weight", 2048},
    {"layer4.1.conv3.weight", "conv_weight", 1048576},
    {"layer4.1.bn2.bias", "bn_bias", 512},
    {"layer4.1.bn2.weight", "bn_weight", 512},
    {"layer4.1.conv2.weight", "conv_weight", 2359296},
    {"layer4.1.bn1.bias", "bn_bias", 512},
    {"layer4.1.bn1.weight", "bn_weight", 512},
    {"layer4.1.conv1.weight", "conv_weight", 1048576},
    {"layer4.0.downsample.1.bias", "bn_bias", 2048},
    {"layer4.0.downsample.1.weight", "bn_weight", 2048},
    {"layer4.0.downsample.0.weight", "conv_weight", 2097152},
    {"layer4.0.bn3.bias", "bn_bias", 2048},
    {"layer4.0.bn3.weight", "bn_weight", 2048},
    {"layer4.0.conv3.weight", "conv_weight", 1048576},
    {"layer4.0.bn2.bias", "bn_bias", 512},
    {"layer4.0.bn2.weight", "bn_weight", 512},
    {"layer4.0.conv2.weight", "conv_weight", 2359296},
    {"layer4.0.bn1.bias", "bn_bias", 512},
    {"layer4.0.bn1.weight", "bn_weight", 512},
    {"layer4.0.conv1.weight", "conv_weight", 524288},
    {"layer3.5.bn3.bias", "bn_bias", 1024},
    {"layer3.5.bn3.weight", "bn_weight", 1024},
    {"layer3.5.conv3.weight", "conv_weight", 262144},
    {"layer3.5.bn2.bias", "bn_bias", 256},
    {"layer3.5.bn2.weight", "bn_weight", 256},
    {"layer3.5.conv2.weight", "conv_weight", 589824},
    {"layer3.5.bn1.bias", "bn_bias", 256},
    {"layer3.5.bn1.weight", "bn_weight", 256},
    {"layer3.5.conv1.weight", "conv_weight", 262144},
    {"layer3.4.bn3.bias", "bn_bias", 1024},
    {"layer3.4.bn3.weight", "bn_weight", 1024},
    {"layer3.4.conv3.weight", "conv_weight", 262144},
    {"layer3.4.bn2.bias", "bn_bias", 256},
    {"layer3.4.bn2.weight", "bn_weight", 256},
    {"layer3.4.conv2.weight", "conv_weight", 589824},
    {"layer3.4.bn1.bias", "bn_bias", 256},
    {"layer3.4.bn1.weight", "bn_weight", 256},
    {"layer3.4.conv1.weight", "conv_weight", 262144},
    {"layer3.3.bn3.bias", "bn_bias", 1024},
    {"layer3.3.bn3.weight", "bn_weight", 1024},
    {"layer3.3.conv3.weight", "conv_weight", 262144},
    {"layer3.3.bn2.bias", "bn_bias", 256},
    {"layer3.3.bn2.weight", "bn_weight", 256},
    {"layer3.3.conv2.weight", "conv_weight", 589824},
    {"layer3.3.bn1.bias", "bn_bias", 256},
    {"layer3.3.bn1.weight", "bn_weight", 256},
    {"layer3.3.conv1.weight", "conv_weight", 262144},
    {"layer3.2.bn3.bias", "bn_bias", 1024},
    {"layer3.2.bn3.weight", "bn_weight", 1024},
    {"layer3.2.conv3.weight", "conv_weight", 262144},
    {"layer3.2.bn2.bias", "bn_bias", 256},
    {"layer3.2.bn2.weight", "bn_weight", 256},
    {"layer3.2.conv2.weight", "conv_weight", 589824},
    {"layer3.2.bn1.bias", "bn_bias", 256},
    {"layer3.2.bn1.weight", "bn_weight", 256},
    {"layer3.2.conv1.weight", "conv_weight", 262144},
    {"layer3.1.bn3.bias", "bn_bias", 1024},
    {"layer3.1.bn3.weight", "bn_weight", 1024},
    {"layer3.1.conv3.weight", "conv_weight", 262144},
    {"layer3.1.bn2.bias", "bn_bias", 256},
    {"layer3.1.bn2.weight", "bn_weight", 256},
    {"layer3.1.conv2.weight", "conv_weight", 589824},
    {"layer3.1.bn1.bias", "bn_bias", 256},
    {"layer3.1.bn1.weight", "bn_weight", 256},
    {"layer3.1.conv1.weight", "conv_weight", 262144},
    {"layer3.0.downsample.1.bias", "bn_bias", 1024},
    {"layer3.0.downsample.1.weight", "bn_weight", 1024},
    {"layer3.0.downsample.0.weight", "conv_weight", 524288},
    {"layer3.0.bn3.bias", "bn_bias", 1024},
    {"layer3.0.bn3.weight", "bn_weight", 1024},
    {"layer3.0.conv3.weight", "conv_weight", 262144},
    {"layer3.0.bn2.bias", "bn_bias", 256},
    {"layer3.0.bn2.weight", "bn_weight", 256},
    {"layer3.0.conv2.weight", "conv_weight", 589824},
    {"layer3.0.bn1.bias", "bn_bias", 256},
    {"layer3.0.bn1.weight", "bn_weight", 256},
    {"layer3.0.conv1.weight", "conv_weight", 131072},
    {"layer2.3.bn3.bias", "bn_bias", 512},
    {"layer2.3.bn3.weight", "bn_weight", 512},
    {"layer2.3.conv3.weight", "conv_weight", 65536},
    {"layer2.3.bn2.bias", "bn_bias", 128},
    {"layer2.3.bn2.weight", "bn_weight", 128},
    {"layer2.3.conv2.weight", "conv_weight", 147456},
    {"layer2.3.bn1.bias", "bn_bias", 128},
    {"layer2.3.bn1.weight", "bn_weight", 128},
    {"layer2.3.conv1.weight", "conv_weight", 65536},
    {"layer2.2.bn3.bias", "bn_bias", 512},
    {"layer2.2.bn3.weight", "bn_weight", 512},
    {"layer2.2.conv3.weight", "conv_weight", 65536},
    {"layer2.2.bn2.bias", "bn_bias", 128},
    {"layer2.2.bn2.weight", "bn_weight", 128},
    {"layer2.2.conv2.weight", "conv_weight", 147456},
    {"layer2.2.bn1.bias", "bn_bias", 128},
    {"layer2.2.bn1.weight", "bn_weight", 128},
    {"layer2.2.conv1.weight", "conv_weight", 65536},
    {"layer2.1.bn3.bias", "bn_bias", 512},
    {"layer2.1.bn3.weight", "bn_weight", 512},
    {"layer2.1.conv3.weight", "conv_weight", 65536},
    {"layer2.1.bn2.bias", "bn_bias", 128},
    {"layer2.1.bn2.weight", "bn_weight", 128},
    {"layer2.1.conv2.weight", "conv_weight", 147456},
    {"layer2.1.bn1.bias", "bn_bias", 128},
    {"layer2.1.bn1.weight", "bn_weight", 128},
    {"layer2.1.conv1.weight", "conv_weight", 65536},
    {"layer2.0.downsample.1.bias", "bn_bias", 512},
    {"layer2.0.downsample.1.weight", "bn_weight", 512},
    {"layer2.0.downsample.0.weight", "conv_weight", 131072},
    {"layer2.0.bn3.bias", "bn_bias", 512},
    {"layer2.0.bn3.weight", "bn_weight", 512},
    {"layer2.0.conv3.weight", "conv_weight", 65536},
    {"layer2.0.bn2.bias", "bn_bias", 128},
    {"layer2.0.bn2.weight", "bn_weight", 128},
    {"layer2.0.conv2.weight", "conv_weight", 147456},
    {"layer2.0.bn1.bias", "bn_bias", 128},
    {"layer2.0.bn1.weight", "bn_weight", 128},
    {"layer2.0.conv1.weight", "conv_weight", 32768},
    {"layer1.2.bn3.bias", "bn_bias", 256},
    {"layer1.2.bn3.weight", "bn_weight", 256},
    {"layer1.2.conv3.weight", "conv_weight", 16384},
    {"layer1.2.bn2.bias", "bn_bias", 64},
    {"layer1.2.bn2.weight", "bn_weight", 64},
    {"layer1.2.conv2.weight", "conv_weight", 36864},
    {"layer1.2.bn1.bias", "bn_bias", 64},
    {"layer1.2.bn1.weight", "bn_weight", 64},
    {"layer1.2.conv1.weight", "conv_weight", 16384},
    {"layer1.1.bn3.bias", "bn_bias", 256},
    {"layer1.1.bn3.weight", "bn_weight", 256},
    {"layer1.1.conv3.weight", "conv_weight", 16384},
    {"layer1.1.bn2.bias", "bn_bias", 64},
    {"layer1.1.bn2.weight", "bn_weight", 64},
    {"layer1.1.conv2.weight", "conv_weight", 36864},
    {"layer1.1.bn1.bias", "bn_bias", 64},
    {"layer1.1.bn1.weight", "bn_weight", 64},
    {"layer1.1.conv1.weight", "conv_weight", 16384},
    {"layer1.0.downsample.1.bias", "bn_bias", 256},
    {"layer1.0.downsample.1.weight", "bn_weight", 256},
    {"layer1.0.downsample.0.weight", "conv_weight", 16384},
    {"layer1.0.bn3.bias", "bn_bias", 256},
    {"layer1.0.bn3.weight", "bn_weight", 256},
    {"layer1.0.conv3.weight", "conv_weight", 16384},
    {"layer1.0.bn2.bias", "bn_bias", 64},
    {"layer1.0.bn2.weight", "bn_weight", 64},
    {"layer1.0.conv2.weight", "conv_weight", 36864},
    {"layer1.0.bn1.bias", "bn_bias", 64},
    {"layer1.0.bn1.weight", "bn_weight", 64},
    {"layer1.0.conv1.weight", "conv_weight", 4096},
    {"bn1.bias", "bn_bias", 64},
    {"bn1.weight", "bn_weight", 64},
    {"conv1.weight", "conv_weight", 9408},
};

static const sp_paper_layer lstm_ptb_layers[] = {
    {"sm_fc.bias", "linear_bias", 10000},
    {"sm_fc.weight", "linear_weight", 15000000},
    {"lstm.bias_hh_l1", "lstm_bias", 6000},
    {"lstm.bias_ih_l1", "lstm_bias", 6000},
    {"lstm.weight_hh_l1", "lstm_weight_hh", 9000000},
    {"lstm.weight_ih_l1", "lstm_weight_ih", 9000000},
    {"lstm.bias_hh_l0", "lstm_bias", 6000},
    {"lstm.bias_ih_l0", "lstm_bias", 6000},
    {"lstm.weight_hh_l0", "lstm_weight_hh", 9000000},
    {"lstm.weight_ih_l0", "lstm_weight_ih", 9000000},
    {"word_embeddings.weight", "embedding", 15000000},
};

/* gpt2-xl: not a paper's model but today's scale, the crossover map's large
 * one: GPT-2 XL (Radford et al., "Language Models are Unsupervised Multitask
 * Learners", 2019, Table 2: 48 layers, d_model 1600; section 2.3: a
 * vocabulary of 50,257 and a context of 1024 tokens), laid out as the
 * released model's parameters are (per block: LayerNorm, the fused q/k/v
 * projection 1600 -> 4800, the output projection, LayerNorm, the MLP 1600 ->
 * 6400 -> 1600, all with bias; the decoder is tied to the token embedding,
 * so it adds nothing), in reverse parameter order as PyTorch's DDP buckets
 * see them.  580 tensors, n = 1,557,611,200 (within int32's index range; the
 * paper rounds it to 1542M): wte 80,411,200, wpe 1,638,400, 48 blocks of
 * 30,740,800, ln_f 3,200. */
#define GPT2_BLOCK(i)                                                                                                  \
    {"h." #i ".mlp.c_proj.bias", "linear_bias", 1600}, {"h." #i ".mlp.c_proj.weight", "linear_weight", 10240000},     \
        {"h." #i ".mlp.c_fc.bias", "linear_bias", 6400}, {"h." #i ".mlp.c_fc.weight", "linear_weight", 10240000},     \
        {"h." #i ".ln_2.bias", "layernorm_bias", 1600}, {"h." #i ".ln_2.weight", "layernorm_weight", 1600},           \
        {"h." #i ".attn.c_proj.bias", "linear_bias", 1600}, {"h." #i ".attn.c_proj.weight", "linear_weight", 2560000}, \
        {"h." #i ".attn.c_attn.bias", "linear_bias", 4800}, {"h." #i ".attn.c_attn.weight", "linear_weight", 7680000}, \
        {"h." #i ".ln_1.bias", "layernorm_bias", 1600}, {"h." #i ".ln_1.weight", "layernorm_weight", 1600}
static const sp_paper_layer gpt2_xl_layers[] = {
    {"ln_f.bias", "layernorm_bias", 1600},
    {"ln_f.weight", "layernorm_weight", 1600},
    GPT2_BLOCK(47), GPT2_BLOCK(46), GPT2_BLOCK(45), GPT2_BLOCK(44), GPT2_BLOCK(43), GPT2_BLOCK(42), GPT2_BLOCK(41),
    GPT2_BLOCK(40), GPT2_BLOCK(39), GPT2_BLOCK(38), GPT2_BLOCK(37), GPT2_BLOCK(36), GPT2_BLOCK(35), GPT2_BLOCK(34),
    GPT2_BLOCK(33), GPT2_BLOCK(32), GPT2_BLOCK(31), GPT2_BLOCK(30), GPT2_BLOCK(29), GPT2_BLOCK(28), GPT2_BLOCK(27),
    GPT2_BLOCK(26), GPT2_BLOCK(25), GPT2_BLOCK(24), GPT2_BLOCK(23), GPT2_BLOCK(22), GPT2_BLOCK(21), GPT2_BLOCK(20),
    GPT2_BLOCK(19), GPT2_BLOCK(18), GPT2_BLOCK(17), GPT2_BLOCK(16), GPT2_BLOCK(15), GPT2_BLOCK(14), GPT2_BLOCK(13),
    GPT2_BLOCK(12), GPT2_BLOCK(11), GPT2_BLOCK(10), GPT2_BLOCK(9),  GPT2_BLOCK(8),  GPT2_BLOCK(7),  GPT2_BLOCK(6),
    GPT2_BLOCK(5),  GPT2_BLOCK(4),  GPT2_BLOCK(3),  GPT2_BLOCK(2),  GPT2_BLOCK(1),  GPT2_BLOCK(0),
    {"wpe.weight", "embedding", 1638400},
    {"wte.weight", "embedding", 80411200},
};
#undef GPT2_BLOCK

/* Forward FLOPs per sample (a multiply-add counts 2) and the per-GPU batch
 * of each model, for whole training iterations (sim/driver/training.c turns
 * them into seconds with a device's sustained FLOP/s; backward is taken as
 * twice forward, Kaplan et al. 2020, arXiv 2001.08361, section 2.1):
 *  - vgg16: 3.13e8 multiply-adds per 32x32 image (Li et al., "Pruning
 *    Filters for Efficient ConvNets", ICLR 2017, Table 1, VGG-16 on
 *    CIFAR-10), so 6.26e8 FLOPs; batch 16 (Ok-Topk's VGG script, reference
 *    notes section 2.8; the gTop-k authors used 32: --batch 32).
 *  - lstm: [DERIVED, not a published figure] per output time step the five
 *    LSTM layers do 4h(i + h) multiply-adds (h = 800; i = 1312, then 800):
 *    27.2M, the two convolutions (41x11 and 21x11 kernels, 32 channels,
 *    strides 2x2 and 2x1 over 161 frequency bins) 10.9M, so 7.6e7 FLOPs per
 *    step; an AN4 utterance of about 2.6 s at a 10 ms hop and a time stride
 *    of 2 is about 130 steps: 9.9e9 FLOPs per sample.  Batch 2 (Ok-Topk's
 *    LSTM script; the gTop-k authors used 8).
 *  - bert: 2N + 2 n_layer n_ctx d per token (Kaplan et al. 2020, Table 1)
 *    with N = 85M non-embedding parameters (12 layers x 12 d^2, d = 768),
 *    n_ctx = 128: 1.72e8 FLOPs per token, x 128 tokens = 2.21e10 per
 *    sequence (the masked-LM decoder, evaluated on the masked 15% only, is
 *    left out); batch 8 (Ok-Topk's BERT script).
 * The gTop-k paper's other four, with the per-GPU batch of the gTop-k
 * authors' exp_configs (one .conf per model), the batches the paper states:
 *  - resnet20: [DERIVED] the convolutions and the classifier of the layer
 *    shapes above on a 32x32 image do 4.06e7 multiply-adds (the figure of
 *    about 41M usually quoted for ResNet-20 on CIFAR-10), so 8.11e7 FLOPs;
 *    batch 32 (resnet20.conf).
 *  - alexnet: [DERIVED] torchvision's AlexNet on a 224x224 image: 7.14e8
 *    multiply-adds (torchvision's model documentation lists 0.71 GFLOPS,
 *    counting multiply-adds), so 1.43e9 FLOPs; batch 256 (alexnet.conf).
 *  - resnet50: He et al., "Deep Residual Learning for Image Recognition",
 *    CVPR 2016, Table 1, give 3.8e9 multiply-adds for ResNet-50 with the
 *    stride in the first 1x1 convolution; this code strides in the 3x3 (as
 *    torchvision does), whose layer shapes give 4.09e9 multiply-adds per
 *    224x224 image (torchvision's documentation: 4.09), so 8.18e9 FLOPs;
 *    batch 64 (resnet50.conf).
 *  - lstm-ptb: [DERIVED, not a published figure] per time step the two LSTM
 *    layers do 4h(i + h) = 18M multiply-adds each (h = i = 1500) and the
 *    decoder 1500 x 10000 = 15M, so 51M multiply-adds, 1.02e8 FLOPs per
 *    step; a sample is a sequence of 35 steps (num_steps = 35 in models/
 *    lstm.py and dl_trainer.py): 3.57e9 FLOPs per sample.  Batch 20
 *    (lstm.conf).
 *  - gpt2-xl: 2N + 2 n_layer n_ctx d per token (Kaplan et al. 2020, Table 1)
 *    with N = 1,475,561,600 non-embedding parameters, n_layer = 48, n_ctx =
 *    1024, d = 1600: 3.108e9 FLOPs per token, x 1024 tokens = 3.18e12 per
 *    sequence; batch 8 sequences per GPU [ASSUMED: no paper's script; a
 *    figure that fits an 80 GB GPU with activation checkpointing]. */
static const sp_paper_model models[] = {
    {"vgg16", "VGG-16 on CIFAR-10 (Ok-Topk's VGG/models/vgg.py)", "cnn", 14728266, vgg16_layers,
     (int)(sizeof vgg16_layers / sizeof vgg16_layers[0]), 6.26e8, 16,
     "forward 3.13e8 multiply-adds per image (Li et al., ICLR 2017, Table 1); batch 16 (Ok-Topk VGG script)"},
    {"lstm", "LSTM on AN4 (Ok-Topk's LSTM/models/lstman4.py)", "lstm", 27569568, lstm_layers,
     (int)(sizeof lstm_layers / sizeof lstm_layers[0]), 9.9e9, 2,
     "forward 7.6e7 FLOPs per time step x 130 steps (derived from the layer shapes and an assumed 2.6 s AN4 "
     "utterance); batch 2 (Ok-Topk LSTM script)"},
    {"bert", "BERT-base pre-training, untied decoder (Ok-Topk's BERT/bert)", "transformer", 133547324, bert_layers,
     (int)(sizeof bert_layers / sizeof bert_layers[0]), 2.21e10, 8,
     "forward 2N + 2 n_layer n_ctx d per token (Kaplan et al. 2020) x 128 tokens; batch 8 (Ok-Topk BERT script)"},
    {"resnet20", "ResNet-20 on CIFAR-10 (gTop-k's models/resnet.py)", "cnn", 269722, resnet20_layers,
     (int)(sizeof resnet20_layers / sizeof resnet20_layers[0]), 8.11e7, 32,
     "forward 4.06e7 multiply-adds per image (derived from the layer shapes); batch 32 (gTop-k resnet20.conf)"},
    {"alexnet", "AlexNet on ImageNet (torchvision's, as gTop-k's dl_trainer.py builds it)", "cnn", 61100840,
     alexnet_layers, (int)(sizeof alexnet_layers / sizeof alexnet_layers[0]), 1.43e9, 256,
     "forward 7.14e8 multiply-adds per 224x224 image (derived from the layer shapes; torchvision lists 0.71 G); "
     "batch 256 (gTop-k alexnet.conf)"},
    {"resnet50", "ResNet-50 on ImageNet (gTop-k's models/imagenet_resnet.py)", "cnn", 25557032, resnet50_layers,
     (int)(sizeof resnet50_layers / sizeof resnet50_layers[0]), 8.18e9, 64,
     "forward 4.09e9 multiply-adds per 224x224 image (stride in the 3x3; He et al. 2016, Table 1, give 3.8e9 with "
     "it in the 1x1); batch 64 (gTop-k resnet50.conf)"},
    {"lstm-ptb", "2-layer LSTM of 1500 on Penn Treebank, untied decoder (gTop-k's models/lstm.py)", "lstm", 66034000,
     lstm_ptb_layers, (int)(sizeof lstm_ptb_layers / sizeof lstm_ptb_layers[0]), 3.57e9, 20,
     "forward 1.02e8 FLOPs per time step x 35 steps (derived from the layer shapes); batch 20 (gTop-k lstm.conf)"},
    {"gpt2-xl", "GPT-2 XL, 1.56B parameters, tied decoder (Radford et al. 2019; not a paper's model)", "transformer",
     1557611200, gpt2_xl_layers, (int)(sizeof gpt2_xl_layers / sizeof gpt2_xl_layers[0]), 3.18e12, 8,
     "forward 2N + 2 n_layer n_ctx d per token (Kaplan et al. 2020) x 1024 tokens; batch 8 [ASSUMED: no script]"},
};

const char *sp_paper_model_names(const char *sep, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < sizeof models / sizeof models[0] && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s%s", i ? sep : "", models[i].name);
        at += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

const sp_paper_model *sp_paper_model_find(const char *name)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(models[i].name, name) == 0)
            return &models[i];
    return NULL;
}
