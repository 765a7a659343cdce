#include "gpu/cuda/CollectiveRunner.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "gpu/common/CollectiveCheck.h"
#include "gpu/common/SizeSweep.h"
#include "gpu/cuda/CudaCheck.h"

namespace fabricsim::gpu {
namespace {

ncclDataType_t ncclType(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return ncclInt8;
    case DataType::kUint8:
      return ncclUint8;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kUint32:
      return ncclUint32;
    case DataType::kInt64:
      return ncclInt64;
    case DataType::kUint64:
      return ncclUint64;
    case DataType::kHalf:
      return ncclFloat16;
    case DataType::kFloat:
      return ncclFloat32;
    case DataType::kDouble:
      return ncclFloat64;
    case DataType::kBfloat16:
      return ncclBfloat16;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProd:
      return ncclProd;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

}  // namespace

CollectiveRunner::CollectiveRunner(CollectiveSweepParams& params, const MpiContext& mpi, uint64_t seed)
    : params_(params), mpi_(mpi), seed_(seed), elementSize_(dataTypeSize(params.type)) {
  const int g = params.gpusPerProcess;
  params.processes = mpi.size();
  params.ranks = mpi.size() * g;
  if (params.root >= params.ranks)
    throw std::invalid_argument("--root " + std::to_string(params.root) + " is not a rank (there are " +
                                std::to_string(params.ranks) + ")");
  int visible = 0;
  FABRICSIM_CUDA(cudaGetDeviceCount(&visible));
  for (int i = 0; i < g; ++i) {
    const int dev = mpi.localRank() * g + i;
    if (dev >= visible)
      throw std::runtime_error("local rank " + std::to_string(mpi.localRank()) + " needs CUDA device " +
                               std::to_string(dev) + " but only " + std::to_string(visible) +
                               " are visible (one GPU per rank: fewer ranks per host, or -g)");
    devices_.push_back(dev);
  }
  // Buffers large enough for the largest size of the sweep, in both variants.
  for (size_t bytes : sweepSizes(params.minBytes, params.maxBytes, params.stepFactor, params.stepBytes)) {
    const auto c = collectiveCounts(params.collective, bytes, elementSize_, params.ranks);
    bufferBytes_ = std::max(bufferBytes_, std::max(c.sendCount, c.recvCount) * elementSize_);
  }
  bufferBytes_ = std::max<size_t>(bufferBytes_, 256);

  ncclUniqueId id{};
  if (mpi.rank() == 0) FABRICSIM_NCCL(ncclGetUniqueId(&id));
  mpi.broadcast(&id, sizeof id);
  gpus_.resize(g);
  for (int i = 0; i < g; ++i) {
    Gpu& gpu = gpus_[i];
    gpu.device = devices_[i];
    gpu.rank = mpi.rank() * g + i;
    FABRICSIM_CUDA(cudaSetDevice(gpu.device));
    FABRICSIM_CUDA(cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking));
    FABRICSIM_CUDA(cudaEventCreate(&gpu.start));
    FABRICSIM_CUDA(cudaEventCreate(&gpu.stop));
    FABRICSIM_CUDA(cudaMalloc(&gpu.send, bufferBytes_));
    FABRICSIM_CUDA(cudaMalloc(&gpu.recv, bufferBytes_));
  }
  FABRICSIM_NCCL(ncclGroupStart());
  for (auto& gpu : gpus_) {
    FABRICSIM_CUDA(cudaSetDevice(gpu.device));
    FABRICSIM_NCCL(ncclCommInitRank(&gpu.comm, params.ranks, id, gpu.rank));
  }
  FABRICSIM_NCCL(ncclGroupEnd());
}

CollectiveRunner::~CollectiveRunner() {
  for (auto& gpu : gpus_) {
    cudaSetDevice(gpu.device);
    if (gpu.comm) ncclCommDestroy(gpu.comm);
    if (gpu.send) cudaFree(gpu.send);
    if (gpu.recv) cudaFree(gpu.recv);
    if (gpu.start) cudaEventDestroy(gpu.start);
    if (gpu.stop) cudaEventDestroy(gpu.stop);
    if (gpu.stream) cudaStreamDestroy(gpu.stream);
  }
}

void CollectiveRunner::issue(const CollectiveCounts& counts, bool inPlace) {
  const ncclDataType_t type = ncclType(params_.type);
  const ncclRedOp_t op = ncclOp(params_.op);
  const int n = params_.ranks;
  const size_t es = elementSize_;
  FABRICSIM_NCCL(ncclGroupStart());
  for (auto& gpu : gpus_) {
    char* send = inPlace ? gpu.recv + gpu.rank * counts.sendInPlaceOffset * es : gpu.send;
    char* recv = inPlace ? gpu.recv + gpu.rank * counts.recvInPlaceOffset * es : gpu.recv;
    const size_t count = counts.paramCount;
    switch (params_.collective) {
      case Collective::kAllReduce:
        FABRICSIM_NCCL(ncclAllReduce(send, recv, count, type, op, gpu.comm, gpu.stream));
        break;
      case Collective::kAllGather:
        FABRICSIM_NCCL(ncclAllGather(send, recv, count, type, gpu.comm, gpu.stream));
        break;
      case Collective::kReduceScatter:
        FABRICSIM_NCCL(ncclReduceScatter(send, recv, count, type, op, gpu.comm, gpu.stream));
        break;
      case Collective::kBroadcast:
        FABRICSIM_NCCL(ncclBroadcast(send, recv, count, type, params_.root, gpu.comm, gpu.stream));
        break;
      case Collective::kAllToAll:
        if (count == 0) break;
        for (int r = 0; r < n; ++r) {
          FABRICSIM_NCCL(ncclSend(send + r * count * es, count, type, r, gpu.comm, gpu.stream));
          FABRICSIM_NCCL(ncclRecv(recv + r * count * es, count, type, r, gpu.comm, gpu.stream));
        }
        break;
      case Collective::kSendRecv:
        if (count == 0) break;
        FABRICSIM_NCCL(ncclSend(send, count, type, (gpu.rank + 1) % n, gpu.comm, gpu.stream));
        FABRICSIM_NCCL(ncclRecv(recv, count, type, (gpu.rank - 1 + n) % n, gpu.comm, gpu.stream));
        break;
    }
  }
  FABRICSIM_NCCL(ncclGroupEnd());
}

void CollectiveRunner::synchronize() {
  for (auto& gpu : gpus_) {
    FABRICSIM_CUDA(cudaSetDevice(gpu.device));
    FABRICSIM_CUDA(cudaStreamSynchronize(gpu.stream));
  }
}

double CollectiveRunner::timeCalls(const CollectiveCounts& counts, bool inPlace) {
  for (int i = 0; i < params_.warmupIters; ++i) issue(counts, inPlace);
  synchronize();
  mpi_.barrier();
  for (auto& gpu : gpus_) FABRICSIM_CUDA(cudaEventRecord(gpu.start, gpu.stream));
  for (int i = 0; i < params_.iters; ++i) issue(counts, inPlace);
  for (auto& gpu : gpus_) FABRICSIM_CUDA(cudaEventRecord(gpu.stop, gpu.stream));
  synchronize();
  double slowest = 0;
  for (auto& gpu : gpus_) {
    float ms = 0;
    FABRICSIM_CUDA(cudaEventElapsedTime(&ms, gpu.start, gpu.stop));
    slowest = std::max(slowest, static_cast<double>(ms) * 1e-3 / params_.iters);
  }
  switch (params_.average) {
    case 0: {
      double t = slowest;
      mpi_.broadcast(&t, sizeof t);
      return t;
    }
    case 2:
      return mpi_.allReduce(slowest, MpiContext::Reduce::kMin);
    case 3:
      return mpi_.allReduce(slowest, MpiContext::Reduce::kMax);
    default:
      return mpi_.allReduce(slowest, MpiContext::Reduce::kSum) / mpi_.size();
  }
}

int64_t CollectiveRunner::check(const CollectiveCounts& counts, bool inPlace, uint64_t rep) {
  const CollectiveCheck checker(params_.collective, params_.type, params_.op, params_.ranks, params_.root,
                                seed_ + rep);
  const size_t es = elementSize_;
  std::vector<unsigned char> host(std::max(counts.sendCount, counts.recvCount) * es);
  for (auto& gpu : gpus_) {
    FABRICSIM_CUDA(cudaSetDevice(gpu.device));
    FABRICSIM_CUDA(cudaMemsetAsync(gpu.recv, 0, bufferBytes_, gpu.stream));
    checker.fillInput(gpu.rank, counts.sendCount, host.data());
    char* send = inPlace ? gpu.recv + gpu.rank * counts.sendInPlaceOffset * es : gpu.send;
    FABRICSIM_CUDA(
        cudaMemcpyAsync(send, host.data(), counts.sendCount * es, cudaMemcpyHostToDevice, gpu.stream));
    FABRICSIM_CUDA(cudaStreamSynchronize(gpu.stream));
  }
  mpi_.barrier();
  issue(counts, inPlace);
  synchronize();
  int64_t wrong = 0;
  for (auto& gpu : gpus_) {
    FABRICSIM_CUDA(cudaSetDevice(gpu.device));
    const char* recv = inPlace ? gpu.recv + gpu.rank * counts.recvInPlaceOffset * es : gpu.recv;
    FABRICSIM_CUDA(cudaMemcpy(host.data(), recv, counts.recvCount * es, cudaMemcpyDeviceToHost));
    wrong += static_cast<int64_t>(checker.countWrong(gpu.rank, counts, host.data()));
  }
  return mpi_.allReduce(wrong, MpiContext::Reduce::kSum);
}

CollectiveMeasurement CollectiveRunner::variant(const CollectiveCounts& counts, bool inPlace) {
  CollectiveMeasurement m;
  const double seconds = timeCalls(counts, inPlace);
  const auto bw = collectiveBandwidth(params_.collective, counts, elementSize_, params_.ranks, seconds);
  m.timeUs = seconds * 1e6;
  m.algBwGBps = bw.algBwGBps;
  m.busBwGBps = bw.busBwGBps;
  if (params_.checkIters > 0) {
    int64_t wrong = 0;
    for (int c = 0; c < params_.checkIters && wrong == 0; ++c) wrong = check(counts, inPlace, ++rep_);
    if (!inPlace || checksInPlace(params_.collective)) m.wrong = wrong;
  }
  return m;
}

CollectiveRow CollectiveRunner::measure(size_t bytes) {
  const auto counts = collectiveCounts(params_.collective, bytes, elementSize_, params_.ranks);
  CollectiveRow row;
  row.bytes = printedBytes(counts, elementSize_);
  row.count = printedCount(counts);
  row.outOfPlace = variant(counts, false);
  row.inPlace = variant(counts, true);
  return row;
}

}  // namespace fabricsim::gpu
