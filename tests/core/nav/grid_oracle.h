// An independent shortest-path oracle for flat maze worlds: Dijkstra over a fine 2D grid of free
// points with 32 move directions, where a point is free when its distance to every wall voxel
// column is at least the agent's radius and a move is free when every point along it is. Knows
// nothing of Recast or Detour. The graph's shortest path is a real path of the free space, at most
// ~0.7% longer than the true any-angle shortest path (the largest angle between neighbouring move
// directions is ~14 degrees) plus the grid's quantisation of start and goal.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

namespace voxcol::testing {

class GridOracle {
 public:
  // Wall columns: wall(x, z) for voxel column (x, z) in [x0, x0 + n) x [z0, z0 + n). Grid points
  // lie every `step` world units (voxel size 1) at cell centres.
  GridOracle(std::function<bool(int, int)> wall, int x0, int z0, int n, float radius, float step)
      : wall_(std::move(wall)), x0_(x0), z0_(z0), n_(n), radius_(radius), step_(step) {
    points_ = int(float(n) / step);
  }

  // Distance from (x, z) to the nearest wall column (capped at 2 + radius).
  float Clearance(float x, float z) const {
    float best = 2 + radius_;
    const int cx = int(std::floor(x)), cz = int(std::floor(z));
    const int reach = int(std::ceil(radius_)) + 1;
    for (int dz = -reach; dz <= reach; ++dz)
      for (int dx = -reach; dx <= reach; ++dx) {
        const int vx = cx + dx, vz = cz + dz;
        const bool outside = vx < x0_ || vz < z0_ || vx >= x0_ + n_ || vz >= z0_ + n_;
        if (!outside && !wall_(vx, vz)) continue;
        const float ex = std::max({float(vx) - x, 0.0f, x - float(vx + 1)});
        const float ez = std::max({float(vz) - z, 0.0f, z - float(vz + 1)});
        best = std::min(best, std::sqrt(ex * ex + ez * ez));
      }
    return best;
  }
  bool Free(float x, float z) const { return Clearance(x, z) >= radius_; }
  // True when every point of the segment (sampled every 0.05) is free.
  bool SegmentFree(float ax, float az, float bx, float bz) const {
    return SegmentClearance(ax, az, bx, bz) >= radius_;
  }
  float SegmentClearance(float ax, float az, float bx, float bz) const {
    const float len = std::hypot(bx - ax, bz - az);
    const int samples = std::max(1, int(std::ceil(len / 0.05f)));
    float best = 1e9f;
    for (int i = 0; i <= samples; ++i) {
      const float t = float(i) / float(samples);
      best = std::min(best, Clearance(ax + t * (bx - ax), az + t * (bz - az)));
    }
    return best;
  }

  // The grid point nearest to world (x, z).
  std::pair<float, float> Snap(float x, float z) const {
    return {X(Index(x, x0_)), Z(Index(z, z0_))};
  }

  // Shortest path length between the grid points nearest to a and b; -1 when none.
  float ShortestPath(float ax, float az, float bx, float bz) const {
    const int s = Index(az, z0_) * points_ + Index(ax, x0_);
    const int g = Index(bz, z0_) * points_ + Index(bx, x0_);
    std::vector<float> dist(size_t(points_) * size_t(points_), 1e30f);
    using Item = std::pair<float, int>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> open;
    dist[size_t(s)] = 0;
    open.push({0, s});
    const std::vector<std::pair<int, int>> moves = Moves();
    while (!open.empty()) {
      const auto [d, i] = open.top();
      open.pop();
      if (d > dist[size_t(i)]) continue;
      if (i == g) return d;
      const int ix = i % points_, iz = i / points_;
      const float px = X(ix), pz = Z(iz);
      for (const auto& [mx, mz] : moves) {
        const int jx = ix + mx, jz = iz + mz;
        if (jx < 0 || jz < 0 || jx >= points_ || jz >= points_) continue;
        const size_t j = size_t(jz) * points_ + size_t(jx);
        const float nd = d + step_ * std::hypot(float(mx), float(mz));
        if (nd >= dist[j] || !SegmentFree(px, pz, X(jx), Z(jz))) continue;
        dist[j] = nd;
        open.push({nd, int(j)});
      }
    }
    return -1;
  }

 private:
  int Index(float v, int origin) const {
    return std::clamp(int(std::floor((v - float(origin)) / step_)), 0, points_ - 1);
  }
  float X(int i) const { return float(x0_) + (float(i) + 0.5f) * step_; }
  float Z(int i) const { return float(z0_) + (float(i) + 0.5f) * step_; }
  // The 32 primitive moves with |dx|, |dz| <= 3.
  static std::vector<std::pair<int, int>> Moves() {
    std::vector<std::pair<int, int>> out;
    for (int dz = -3; dz <= 3; ++dz)
      for (int dx = -3; dx <= 3; ++dx)
        if ((dx != 0 || dz != 0) && std::gcd(std::abs(dx), std::abs(dz)) == 1)
          out.push_back({dx, dz});
    return out;
  }

  std::function<bool(int, int)> wall_;
  int x0_, z0_, n_;
  float radius_, step_;
  int points_;
};

}  // namespace voxcol::testing
