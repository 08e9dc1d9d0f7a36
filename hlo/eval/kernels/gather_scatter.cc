#include "hlo/eval/kernels/gather_scatter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "hlo/eval/kernels/index_util.h"
#include "hlo/eval/kernels/reduce.h"

namespace tpusim::hlo {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Dims of [0, rank) not in any of the lists, ascending.
std::vector<int64_t> Complement(int64_t rank,
                                std::initializer_list<const std::vector<int64_t>*> lists) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    bool in_any = false;
    for (const auto* l : lists) in_any |= Contains(*l, d);
    if (!in_any) out.push_back(d);
  }
  return out;
}

// Index-space bookkeeping shared by gather and scatter: reads start vectors out of the indices
// array.
struct IndexReader {
  const Literal* indices;
  int64_t index_vector_dim;
  std::vector<int64_t> batch_dims;  // dims of `indices` other than index_vector_dim
  int64_t vector_size;

  static StatusOr<IndexReader> Make(const Literal& indices, int64_t ivd, const char* op) {
    IndexReader r;
    r.indices = &indices;
    r.index_vector_dim = ivd;
    const int64_t rank = indices.shape().rank();
    if (!IsInteger(indices.element_type()) || ivd < 0 || ivd > rank) {
      return InvalidArgument(fmt::format("{}: indices {} with index_vector_dim={} are invalid", op,
                                         indices.shape().ToString(false), ivd));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != ivd) r.batch_dims.push_back(d);
    }
    r.vector_size = ivd < rank ? indices.shape().dimensions(ivd) : 1;
    return r;
  }
  std::vector<int64_t> BatchSizes() const {
    std::vector<int64_t> s;
    for (int64_t d : batch_dims) s.push_back(indices->shape().dimensions(d));
    return s;
  }
  // The start vector at batch index g.
  void Read(std::span<const int64_t> g, std::vector<int64_t>& out) const {
    std::vector<int64_t> idx(static_cast<size_t>(indices->shape().rank()));
    for (size_t j = 0; j < batch_dims.size(); ++j) idx[static_cast<size_t>(batch_dims[j])] = g[j];
    out.resize(static_cast<size_t>(vector_size));
    for (int64_t k = 0; k < vector_size; ++k) {
      if (index_vector_dim < indices->shape().rank())
        idx[static_cast<size_t>(index_vector_dim)] = k;
      out[static_cast<size_t>(k)] = indices->GetAsInt64(indices->LinearIndex(idx));
    }
  }
  // Position of indices dim `d` within batch_dims (-1 if it is the index vector dim).
  int64_t BatchPosition(int64_t d) const {
    auto it = std::find(batch_dims.begin(), batch_dims.end(), d);
    return it == batch_dims.end() ? -1 : static_cast<int64_t>(it - batch_dims.begin());
  }
};

}  // namespace

StatusOr<Literal> Gather(const Literal& operand, const Literal& start_indices,
                         const GatherDimensionNumbers& dn, std::span<const int64_t> slice_sizes,
                         const Shape& out, const KernelOptions& options) {
  const Shape& os = operand.shape();
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("gather {} with indices {} -> {}: {}", os.ToString(false),
                                       start_indices.shape().ToString(false), out.ToString(false),
                                       why));
  };
  TPUSIM_ASSIGN_OR_RETURN(IndexReader reader,
                          IndexReader::Make(start_indices, dn.index_vector_dim, "gather"));
  if (static_cast<int64_t>(slice_sizes.size()) != os.rank()) return bad("slice_sizes rank");
  if (reader.vector_size != static_cast<int64_t>(dn.start_index_map.size())) {
    return bad("index vector size != start_index_map size");
  }
  for (int64_t d : dn.start_index_map) {
    if (d < 0 || d >= os.rank()) return bad("start_index_map out of range");
  }
  if (dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return bad("batching dims lists differ in length");
  }
  std::vector<int64_t> offset_operand_dims =
      Complement(os.rank(), {&dn.collapsed_slice_dims, &dn.operand_batching_dims});
  std::vector<int64_t> out_batch_dims = Complement(out.rank(), {&dn.offset_dims});
  std::vector<int64_t> batch_sizes = reader.BatchSizes();
  if (offset_operand_dims.size() != dn.offset_dims.size() ||
      out_batch_dims.size() != batch_sizes.size() || out.element_type() != operand.element_type()) {
    return bad("offset/batch dimension counts do not match the result rank");
  }
  for (size_t j = 0; j < out_batch_dims.size(); ++j) {
    if (out.dimensions(out_batch_dims[j]) != batch_sizes[j]) return bad("batch dim sizes differ");
  }
  std::vector<int64_t> offset_sizes;
  for (size_t k = 0; k < dn.offset_dims.size(); ++k) {
    int64_t sz = slice_sizes[static_cast<size_t>(offset_operand_dims[k])];
    if (out.dimensions(dn.offset_dims[k]) != sz)
      return bad("offset dim sizes differ from slice_sizes");
    offset_sizes.push_back(sz);
  }
  for (int64_t d = 0; d < os.rank(); ++d) {
    if (slice_sizes[static_cast<size_t>(d)] > os.dimensions(d) ||
        slice_sizes[static_cast<size_t>(d)] < 0) {
      return bad("slice size larger than the operand");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  const int64_t eb = ByteWidth(out.element_type());
  std::vector<int64_t> out_strides = RowMajorStrides(out.dimensions());
  std::vector<int64_t> op_strides = RowMajorStrides(os.dimensions());
  std::vector<int64_t> svec, start(static_cast<size_t>(os.rank()));
  uint8_t* dst = result.mutable_raw();
  const uint8_t* src = operand.raw();
  ForEachIndex(batch_sizes, [&](std::span<const int64_t> g) {
    reader.Read(g, svec);
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < svec.size(); ++k) {
      int64_t d = dn.start_index_map[k];
      start[static_cast<size_t>(d)] =
          std::clamp<int64_t>(svec[k], 0, os.dimensions(d) - slice_sizes[static_cast<size_t>(d)]);
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
      int64_t pos = reader.BatchPosition(dn.start_indices_batching_dims[i]);
      if (pos >= 0)
        start[static_cast<size_t>(dn.operand_batching_dims[i])] = g[static_cast<size_t>(pos)];
    }
    int64_t out_base = 0, op_base = 0;
    for (size_t j = 0; j < out_batch_dims.size(); ++j) {
      out_base += g[j] * out_strides[static_cast<size_t>(out_batch_dims[j])];
    }
    for (size_t d = 0; d < start.size(); ++d) op_base += start[d] * op_strides[d];
    ForEachIndex(offset_sizes, [&](std::span<const int64_t> w) {
      int64_t o = out_base, p = op_base;
      for (size_t k = 0; k < w.size(); ++k) {
        o += w[k] * out_strides[static_cast<size_t>(dn.offset_dims[k])];
        p += w[k] * op_strides[static_cast<size_t>(offset_operand_dims[k])];
      }
      std::memcpy(dst + o * eb, src + p * eb, static_cast<size_t>(eb));
    });
  });
  return result;
}

StatusOr<Literal> Scatter(std::span<const Literal* const> operands, const Literal& scatter_indices,
                          std::span<const Literal* const> updates,
                          const ScatterDimensionNumbers& dn, const CalledComputation& to_apply,
                          const Shape& out, const KernelOptions& options) {
  (void)options;  // results are copies of the operands: no new allocation beyond theirs
  if (operands.empty() || operands.size() != updates.size()) {
    return InvalidArgument("scatter: needs as many updates as operands");
  }
  const Shape& os = operands[0]->shape();
  const Shape& us = updates[0]->shape();
  auto bad = [&](const std::string& why) {
    return InvalidArgument(fmt::format("scatter into {} with indices {} and updates {}: {}",
                                       os.ToString(false), scatter_indices.shape().ToString(false),
                                       us.ToString(false), why));
  };
  TPUSIM_ASSIGN_OR_RETURN(IndexReader reader,
                          IndexReader::Make(scatter_indices, dn.index_vector_dim, "scatter"));
  if (reader.vector_size != static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size())) {
    return bad("index vector size != scatter_dims_to_operand_dims size");
  }
  for (int64_t d : dn.scatter_dims_to_operand_dims) {
    if (d < 0 || d >= os.rank()) return bad("scatter_dims_to_operand_dims out of range");
  }
  std::vector<int64_t> window_operand_dims =
      Complement(os.rank(), {&dn.inserted_window_dims, &dn.input_batching_dims});
  std::vector<int64_t> update_scatter_dims = Complement(us.rank(), {&dn.update_window_dims});
  std::vector<int64_t> batch_sizes = reader.BatchSizes();
  if (window_operand_dims.size() != dn.update_window_dims.size() ||
      update_scatter_dims.size() != batch_sizes.size()) {
    return bad("window/scatter dimension counts do not match the updates rank");
  }
  std::vector<int64_t> window_sizes;
  for (int64_t d : dn.update_window_dims) window_sizes.push_back(us.dimensions(d));
  for (size_t j = 0; j < update_scatter_dims.size(); ++j) {
    if (us.dimensions(update_scatter_dims[j]) != batch_sizes[j])
      return bad("scatter dim sizes differ");
  }
  for (size_t k = 0; k < window_operand_dims.size(); ++k) {
    if (window_sizes[k] > os.dimensions(window_operand_dims[k]))
      return bad("window larger than operand");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i]->shape().dimensions() != os.dimensions() ||
        updates[i]->shape().dimensions() != us.dimensions() ||
        updates[i]->element_type() != operands[i]->element_type()) {
      return bad("operands/updates differ in shape");
    }
  }
  std::vector<Literal> results;
  for (const Literal* op : operands) results.push_back(*op);  // copy-on-write
  std::vector<int64_t> op_strides = RowMajorStrides(os.dimensions());
  std::vector<int64_t> up_strides = RowMajorStrides(us.dimensions());
  std::vector<int64_t> svec, start(static_cast<size_t>(os.rank()));
  const bool fast = operands.size() == 1 && HasFastBinary(to_apply.fast, os.element_type());
  Status status;
  ForEachIndex(batch_sizes, [&](std::span<const int64_t> g) {
    if (!status.ok()) return;
    reader.Read(g, svec);
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < svec.size(); ++k)
      start[static_cast<size_t>(dn.scatter_dims_to_operand_dims[k])] = svec[k];
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
      int64_t pos = reader.BatchPosition(dn.scatter_indices_batching_dims[i]);
      if (pos >= 0)
        start[static_cast<size_t>(dn.input_batching_dims[i])] = g[static_cast<size_t>(pos)];
    }
    // Skip a window that does not fit entirely.
    for (int64_t d = 0; d < os.rank(); ++d) {
      auto it = std::find(window_operand_dims.begin(), window_operand_dims.end(), d);
      int64_t extent = it == window_operand_dims.end()
                           ? 1
                           : window_sizes[static_cast<size_t>(it - window_operand_dims.begin())];
      if (start[static_cast<size_t>(d)] < 0 ||
          start[static_cast<size_t>(d)] + extent > os.dimensions(d))
        return;
    }
    int64_t op_base = 0, up_base = 0;
    for (size_t d = 0; d < start.size(); ++d) op_base += start[d] * op_strides[d];
    for (size_t j = 0; j < update_scatter_dims.size(); ++j) {
      up_base += g[j] * up_strides[static_cast<size_t>(update_scatter_dims[j])];
    }
    ForEachIndex(window_sizes, [&](std::span<const int64_t> w) {
      if (!status.ok()) return;
      int64_t p = op_base, u = up_base;
      for (size_t k = 0; k < w.size(); ++k) {
        p += w[k] * op_strides[static_cast<size_t>(window_operand_dims[k])];
        u += w[k] * up_strides[static_cast<size_t>(dn.update_window_dims[k])];
      }
      if (fast) {
        Literal& r = results[0];
        PrimitiveTypeSwitch(r.element_type(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          T* d = r.mutable_data<T>();
          FastBinary(to_apply.fast, d[p], updates[0]->data<T>()[u], &d[p]);
        });
        return;
      }
      std::vector<Literal> args;
      auto scalar_at = [](const Literal& l, int64_t i) {
        Literal s = Literal::Create(Shape(l.element_type(), {})).value();
        const int64_t eb = ByteWidth(l.element_type());
        std::memcpy(s.mutable_raw(), l.raw() + i * eb, static_cast<size_t>(eb));
        return s;
      };
      for (const Literal& r : results) args.push_back(scalar_at(r, p));
      for (const Literal* up : updates) args.push_back(scalar_at(*up, u));
      auto r = to_apply.fn(args);
      if (!r.ok()) {
        status = r.status();
        return;
      }
      std::vector<const Literal*> leaves = r->Leaves();
      if (leaves.size() != results.size()) {
        status = InvalidArgument("scatter: to_apply returned the wrong number of values");
        return;
      }
      for (size_t i = 0; i < results.size(); ++i) {
        if (leaves[i]->element_type() != results[i].element_type() ||
            leaves[i]->element_count() != 1) {
          status = InvalidArgument("scatter: to_apply returned the wrong type");
          return;
        }
        int64_t eb = ByteWidth(results[i].element_type());
        std::memcpy(results[i].mutable_raw() + p * eb, leaves[i]->raw(), static_cast<size_t>(eb));
      }
    });
  });
  TPUSIM_RETURN_IF_ERROR(status);
  if (out.IsArray()) {
    if (results.size() != 1 || !out.Compatible(os))
      return bad("result shape differs from the operand");
    results[0].ReshapeInPlace(out);
    return std::move(results[0]);
  }
  return Literal::MakeTuple(std::move(results));
}

}  // namespace tpusim::hlo
