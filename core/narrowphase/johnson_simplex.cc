// Johnson's distance sub-algorithm with cached determinants; see johnson_simplex.h for sources.
#include "core/narrowphase/johnson_simplex.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace voxcol {
namespace {

double DotD(const Vec3& a, const Vec3& b) {
  return double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z;
}

}  // namespace

int JohnsonSimplex::Size() const {
  int n = 0;
  for (int i = 0; i < 4; ++i) n += (bits_ >> i) & 1;
  return n;
}

bool JohnsonSimplex::Contains(const Vec3& w) const {
  for (int i = 0; i < 4; ++i) {
    if ((all_bits_ & (1 << i)) && y_[i].w == w) return true;
  }
  return false;
}

void JohnsonSimplex::Add(const SupportPoint& p) {
  assert(bits_ != 0xf);
  for (last_ = 0, last_bit_ = 1; bits_ & last_bit_; ++last_, last_bit_ <<= 1) {
  }
  y_[last_] = p;
  all_bits_ = bits_ | last_bit_;
  UpdateDeterminants();
}

// Recurrence of Johnson: Delta_i({y_i}) = 1 and, for j not in s and any fixed k in s,
//   Delta_j(s + {y_j}) = sum_{i in s} Delta_i(s) (y_k . y_i - y_j . y_i).
// Only subsets containing the new point `last_` are (re)computed; the others are still cached.
void JohnsonSimplex::UpdateDeterminants() {
  const int n = last_;
  for (int i = 0, bit = 1; i < 4; ++i, bit <<= 1) {
    if (bits_ & bit) dp_[i][n] = dp_[n][i] = DotD(y_[i].w, y_[n].w);
  }
  dp_[n][n] = DotD(y_[n].w, y_[n].w);
  det_[last_bit_][n] = 1;
  for (int j = 0, sj = 1; j < 4; ++j, sj <<= 1) {
    if (!(bits_ & sj)) continue;
    // Pairs {j, n}.
    int s2 = sj | last_bit_;
    det_[s2][j] = dp_[n][n] - dp_[n][j];
    det_[s2][n] = dp_[j][j] - dp_[j][n];
    for (int k = 0, sk = 1; k < j; ++k, sk <<= 1) {
      if (!(bits_ & sk)) continue;
      // Triples {k, j, n}, each cofactor expanded from the pair that lacks it.
      int s3 = sk | s2;
      det_[s3][k] = det_[s2][j] * (dp_[j][j] - dp_[j][k]) + det_[s2][n] * (dp_[n][j] - dp_[n][k]);
      det_[s3][j] = det_[sk | last_bit_][k] * (dp_[k][k] - dp_[k][j]) +
                    det_[sk | last_bit_][n] * (dp_[n][k] - dp_[n][j]);
      det_[s3][n] =
          det_[sk | sj][k] * (dp_[k][k] - dp_[k][n]) + det_[sk | sj][j] * (dp_[j][k] - dp_[j][n]);
    }
  }
  if (all_bits_ == 0xf) {
    // The tetrahedron, each cofactor from the triangle without that point (expanded about its
    // lowest remaining index).
    det_[15][0] = det_[14][1] * (dp_[1][1] - dp_[1][0]) + det_[14][2] * (dp_[2][1] - dp_[2][0]) +
                  det_[14][3] * (dp_[3][1] - dp_[3][0]);
    det_[15][1] = det_[13][0] * (dp_[0][0] - dp_[0][1]) + det_[13][2] * (dp_[2][0] - dp_[2][1]) +
                  det_[13][3] * (dp_[3][0] - dp_[3][1]);
    det_[15][2] = det_[11][0] * (dp_[0][0] - dp_[0][2]) + det_[11][1] * (dp_[1][0] - dp_[1][2]) +
                  det_[11][3] * (dp_[3][0] - dp_[3][2]);
    det_[15][3] = det_[7][0] * (dp_[0][0] - dp_[0][3]) + det_[7][1] * (dp_[1][0] - dp_[1][3]) +
                  det_[7][2] * (dp_[2][0] - dp_[2][3]);
  }
}

bool JohnsonSimplex::AffinelyDependent() const {
  double sum = 0;
  for (int i = 0; i < 4; ++i) {
    if (all_bits_ & (1 << i)) sum += det_[all_bits_][i];
  }
  return sum <= 0;
}

// Theorem of Johnson: s is the answer iff Delta_i(s) > 0 for i in s (the closest point of aff(s)
// is in the relative interior) and Delta_j(s + {y_j}) <= 0 for every other point j (the origin is
// in the Voronoi region of s).
bool JohnsonSimplex::Valid(int s) const {
  if (s == 0xf && Flat()) return false;
  for (int i = 0, bit = 1; i < 4; ++i, bit <<= 1) {
    if (!(all_bits_ & bit)) continue;
    if (s & bit) {
      if (det_[s][i] <= 0) return false;
    } else if (det_[s | bit][i] > 0) {
      return false;
    }
  }
  return true;
}

// A tetrahedron whose Gram determinant Delta(Y) = (6 V)^2 is negligible against its size^6 is
// flat (e.g. four coplanar corners of a large box face); rounding then gives its cofactors random
// signs and it must not be taken for "origin inside". The threshold is a height of ~1e-6 size.
bool JohnsonSimplex::Flat() const {
  double sum = 0, size_sq = 0;
  for (int i = 0; i < 4; ++i) sum += det_[15][i], size_sq = std::max(size_sq, dp_[i][i]);
  return !(sum > 1e-12 * size_sq * size_sq * size_sq);
}

bool JohnsonSimplex::Proper(int s) const {
  if (s == 0xf && Flat()) return false;
  for (int i = 0, bit = 1; i < 4; ++i, bit <<= 1) {
    if ((s & bit) && det_[s][i] <= 0) return false;
  }
  return true;
}

Vec3 JohnsonSimplex::Vector(int s) const {
  double sum = 0, v[3] = {0, 0, 0};
  for (int i = 0, bit = 1; i < 4; ++i, bit <<= 1) {
    if (!(s & bit)) continue;
    sum += det_[s][i];
    for (int k = 0; k < 3; ++k) v[k] += y_[i].w[k] * det_[s][i];
  }
  return Vec3(float(v[0] / sum), float(v[1] / sum), float(v[2] / sum));
}

bool JohnsonSimplex::Closest(Vec3* v) {
  // The new point is a support point beyond the old simplex, so it belongs to the answer.
  for (int s = bits_; s; --s) {
    if ((s & bits_) == s && Valid(s | last_bit_)) {
      bits_ = s | last_bit_;
      *v = Vector(bits_);
      return true;
    }
  }
  if (Valid(last_bit_)) {
    bits_ = last_bit_;
    *v = y_[last_].w;
    return true;
  }
  return false;
}

void JohnsonSimplex::BackupClosest(Vec3* v) {
  float best = std::numeric_limits<float>::infinity();
  for (int s = all_bits_; s; --s) {
    if ((s & all_bits_) != s || !Proper(s)) continue;
    Vec3 u = Vector(s);
    if (LengthSq(u) < best) best = LengthSq(u), bits_ = s, *v = u;
  }
}

float JohnsonSimplex::MaxVertexSq() const {
  double m = 0;
  for (int i = 0; i < 4; ++i) {
    if ((bits_ & (1 << i)) && dp_[i][i] > m) m = dp_[i][i];
  }
  return float(m);
}

void JohnsonSimplex::ClosestPoints(Vec3* a, Vec3* b) const {
  double sum = 0;
  for (int i = 0, bit = 1; i < 4; ++i, bit <<= 1) {
    if (bits_ & bit) sum += det_[bits_][i];
  }
  Vec3 pa, pb;
  for (int i = 0, bit = 1; i < 4; ++i, bit <<= 1) {
    if (!(bits_ & bit)) continue;
    float lambda = float(det_[bits_][i] / sum);
    pa += y_[i].a * lambda, pb += y_[i].b * lambda;
  }
  *a = pa;
  *b = pb;
}

int JohnsonSimplex::Points(SupportPoint* out) const {
  int n = 0;
  for (int i = 0; i < 4; ++i) {
    if (bits_ & (1 << i)) out[n++] = y_[i];
  }
  return n;
}

void JohnsonSimplex::Rebase(const Vec3& x) {
  int old = bits_;
  bits_ = 0;
  for (int i = 0; i < 4; ++i) {
    if (!(old & (1 << i))) continue;
    y_[i].w = x - (y_[i].a - y_[i].b);
    last_ = i, last_bit_ = 1 << i, all_bits_ = bits_ | last_bit_;
    UpdateDeterminants();
    bits_ |= last_bit_;
  }
  all_bits_ = bits_;
}

void JohnsonSimplex::Remove(const Vec3& w) {
  for (int i = 0; i < 4; ++i) {
    if ((bits_ & (1 << i)) && y_[i].w == w) bits_ &= ~(1 << i);
  }
  all_bits_ = bits_;
}

}  // namespace voxcol
