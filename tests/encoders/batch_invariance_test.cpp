// Batch invariance of the proxies' matrix products and convolutions (nn_blocks): on CPU in float32 a
// sequence's outputs are bit-identical whether it runs alone or stacked with others, right-padded, at
// any position of the batch, on any thread count. Library GEMMs and convolutions do not promise this
// (OpenBLAS rounds the last rows of a product with other kernels, a row's place in its group of rows
// matters, and threads split a call by its shape), and one flipped bit can flip a quantiser code on a
// near tie. Also the process settings the encodes run under: threads, and the malloc.
#include "encoders/nn_blocks.hpp"

#include <ATen/CPUGeneratorImpl.h>

// LibTorch's logging defines a CHECK macro; Catch's is the one meant here.
#undef CHECK
#include <catch2/catch.hpp>

#include <cstring>

#include "encoders/encoder_hook.hpp"

using namespace refenc::encoders;
using namespace refenc::encoders::nn;

namespace {

/// Restores LibTorch's and OpenBLAS's thread counts when the test ends.
struct ThreadScope {
  explicit ThreadScope(int n) : saved(at::get_num_threads()) { set_torch_threads(n); }
  ~ThreadScope() { set_torch_threads(saved); }
  int saved;
};

/// Bitwise equality: the same shape and the same bytes.
bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.sizes() != b.sizes()) return false;
  torch::Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<std::size_t>(x.nbytes())) == 0;
}

/// Values spread over several orders of magnitude, so that sums round differently in another order.
torch::Tensor ragged_values(at::IntArrayRef shape, std::uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::randn(shape, gen, at::kFloat) * at::exp(at::randn(shape, gen, at::kFloat) * 2);
}

}  // namespace

TEST_CASE("linear_rows gives each sequence its own bits at any batch size and length", "[encoders][batch]") {
  torch::InferenceMode guard;
  const int threads = GENERATE(1, 2, 3);
  ThreadScope scope(threads);
  const std::int64_t k = GENERATE(64, 96, 257), m = 80;
  const torch::Tensor w = ragged_values({m, k}, 1), bias = ragged_values({m}, 2);
  // Lengths around the 12- and 48-row groups, the longest over two tiles of rows.
  const std::int64_t max_t = std::max<std::int64_t>(2 * tile_rows(k, m) + 29, 333);
  const std::vector<std::int64_t> lengths = {1, 11, 13, 47, 49, 100, 301, max_t};
  const torch::Tensor x = ragged_values({static_cast<std::int64_t>(lengths.size()), max_t, k}, 3);
  std::vector<torch::Tensor> alone;
  for (std::size_t i = 0; i < lengths.size(); ++i)
    alone.push_back(linear_rows(x.narrow(0, i, 1).narrow(1, 0, lengths[i]), w, bias));

  for (std::int64_t b = 2; b <= static_cast<std::int64_t>(lengths.size()); b += 3) {
    for (std::int64_t first = 0; first + b <= static_cast<std::int64_t>(lengths.size()); first += 2) {
      // A batch is padded to its longest member.
      std::int64_t width = 0;
      for (std::int64_t i = first; i < first + b; ++i) width = std::max(width, lengths[i]);
      const torch::Tensor y = linear_rows(x.narrow(0, first, b).narrow(1, 0, width), w, bias);
      for (std::int64_t i = 0; i < b; ++i) {
        INFO("threads " << threads << " K " << k << " batch " << b << " first " << first << " item " << i);
        CHECK(same_bits(y[i].narrow(0, 0, lengths[first + i]).unsqueeze(0), alone[first + i]));
      }
    }
  }
  // And it is the product it claims to be: float rounding of the sum's magnitude away from the double one.
  const torch::Tensor xs = x.narrow(1, 0, 301).to(at::kDouble), wd = w.to(at::kDouble), bd = bias.to(at::kDouble);
  const torch::Tensor err = (linear_rows(x.narrow(1, 0, 301), w, bias).to(at::kDouble) - at::linear(xs, wd, bd)).abs();
  CHECK((err <= at::linear(xs.abs(), wd.abs(), bd.abs()) * 1e-5).all().item<bool>());
}

TEST_CASE("CausalConv1d gives each clip its own bits at any batch size and padded length", "[encoders][batch]") {
  const int threads = GENERATE(1, 2, 3);
  ThreadScope scope(threads);
  struct Shape {
    std::int64_t cin, cout, kernel, stride, dilation, groups;
  };
  const Shape s = GENERATE(Shape{1, 32, 7, 1, 1, 1}, Shape{24, 40, 3, 1, 9, 1}, Shape{16, 48, 8, 4, 1, 1},
                           Shape{48, 48, 7, 1, 1, 48}, Shape{40, 24, 1, 1, 1, 1});
  SeededInit init("00ff" + std::to_string(s.cin * 131 + s.kernel * 7 + s.dilation));
  CausalConv1d conv(init, s.cin, s.cout, s.kernel, s.stride, s.dilation, s.groups);
  {
    torch::NoGradGuard no_grad;
    conv->bias.copy_(ragged_values({s.cout}, 4));
  }
  torch::InferenceMode guard;
  // Lengths in multiples of the stride; the longest over one window of output frames.
  const std::vector<std::int64_t> frames = {1, 13, 48, 97, 500,
                                            conv_window(s.cin / s.groups * s.kernel, s.cout) + 30};
  const std::int64_t max_n = frames.back() * s.stride;
  const torch::Tensor x = ragged_values({static_cast<std::int64_t>(frames.size()), s.cin, max_n}, 5);
  std::vector<torch::Tensor> alone;
  for (std::size_t i = 0; i < frames.size(); ++i)
    alone.push_back(conv->forward(x.narrow(0, i, 1).narrow(2, 0, frames[i] * s.stride)));

  for (std::int64_t b = 2; b <= static_cast<std::int64_t>(frames.size()); b += 2) {
    for (std::int64_t first = 0; first + b <= static_cast<std::int64_t>(frames.size()); ++first) {
      std::int64_t width = 0;
      for (std::int64_t i = first; i < first + b; ++i) width = std::max(width, frames[i]);
      // Right padding with zeros, as the hooks pad a batch; a causal layer's first frames ignore it.
      const torch::Tensor y = conv->forward(x.narrow(0, first, b).narrow(2, 0, width * s.stride));
      for (std::int64_t i = 0; i < b; ++i) {
        INFO("threads " << threads << " cin " << s.cin << " kernel " << s.kernel << " stride " << s.stride
                        << " dilation " << s.dilation << " groups " << s.groups << " batch " << b << " first "
                        << first << " item " << i);
        CHECK(same_bits(y[i].narrow(1, 0, frames[first + i]).unsqueeze(0), alone[first + i]));
      }
    }
  }
  // The same numbers as the library convolution, within float rounding.
  const std::int64_t pad = (s.kernel - 1) * s.dilation - (s.stride - 1);
  const torch::Tensor xs = at::constant_pad_nd(x.narrow(2, 0, 500 * s.stride).to(at::kDouble), {pad, 0});
  const torch::Tensor wd = conv->weight.to(at::kDouble), bd = conv->bias.to(at::kDouble);
  auto reference = [&](const torch::Tensor& in, const torch::Tensor& w, const torch::Tensor& b) {
    return at::conv1d(in, w, b, at::IntArrayRef(s.stride), at::IntArrayRef(std::int64_t{0}),
                      at::IntArrayRef(s.dilation), s.groups);
  };
  const torch::Tensor err =
      (conv->forward(x.narrow(2, 0, 500 * s.stride)).to(at::kDouble) - reference(xs, wd, bd)).abs();
  CHECK((err <= reference(xs.abs(), wd.abs(), bd.abs()) * 1e-5).all().item<bool>());
}

TEST_CASE("set_torch_threads sets OpenBLAS's threads with LibTorch's", "[encoders][threads]") {
  const int before = torch_threads();
  set_torch_threads(1);
  CHECK(torch_threads() == 1);
  CHECK((blas_threads() == 0 || blas_threads() == 1));  // 0: LibTorch is not on OpenBLAS
  set_torch_threads(2);
  CHECK(torch_threads() == 2);
  CHECK((blas_threads() == 0 || blas_threads() == 2));
  set_torch_threads(before);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)  // sanitizer builds keep their malloc
TEST_CASE("the encodes run on tcmalloc_minimal, linked as the CLI links it", "[encoders][malloc]") {
  CHECK(allocator_name() == "tcmalloc_minimal");
}
#endif
