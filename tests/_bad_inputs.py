"""The bad-input corpus: one program per case, run against torch and against dispatchcore.

Each case is ``(name, program, expected, key_words)``. ``program`` is Python source run with
``t`` bound to ``torch`` or ``dispatchcore`` (a pair of callables is built from it by
``programs``), or a ``(torch_source, dispatchcore_source)`` pair where the two spell it
differently. ``expected`` is the exception class torch raises (recorded from torch 2.13), or
None when the call succeeds in torch; ``key_words`` must all appear in both messages.

Read by ``tests/behavior/test_bad_inputs.py`` (dispatchcore only, against the recorded
expectations) and ``tests/differential/test_vs_torch_bad_inputs.py`` (against torch itself).
"""

# ruff: noqa: E501 - one case per line: the table reads (and diffs) best unwrapped

from __future__ import annotations

import itertools
import warnings
from typing import Any

NIE, RE, TE, VE, IE = NotImplementedError, RuntimeError, TypeError, ValueError, IndexError

# Each program sees: t (the library), F (nn.functional), x (2x3 float), y (3x2), v (3,),
# i (int64 arange(6)), s (0-d float), leaf (a (2,) float leaf requiring grad), L(kind) (a Library
# of a fresh namespace, destroyed after the case), NS (that namespace), Function (autograd's).
CASES: list[tuple[str, Any, type[BaseException] | None, tuple[str, ...]]] = [
    # --- factories: argument types (python_arg_parser's TypeErrors) ---------------------------
    ("zeros_str_size", "t.zeros('a')", TE, ("zeros(): argument 'size' (position 1) must be tuple of ints, not str",)),
    ("zeros_float_size", "t.zeros(2.5)", TE, ("argument 'size' (position 1) must be tuple of ints, not float",)),
    ("zeros_float_in_list", "t.zeros([2.5])", TE, ("but found element of type float at pos 0",)),
    ("zeros_str_in_tuple", "t.zeros((2, 'a'))", TE, ("failed to unpack the object at pos 2",)),
    ("zeros_str_vararg", "t.zeros(2, 3, 'a')", TE, ("failed to unpack the object at pos 3",)),
    ("zeros_none_size", "t.zeros(None)", TE, ("argument 'size' (position 1) must be tuple of ints, not NoneType",)),
    ("zeros_object_size", "t.zeros(object())", TE, ("must be tuple of ints, not object",)),
    ("zeros_no_size", "t.zeros()", TE, ("zeros() missing 1 required positional arguments", '"size"')),
    ("zeros_two_tuples", "t.zeros((2,), (3,))", TE, ("zeros() takes 1 positional argument but 2 were given",)),
    ("zeros_unknown_kw", "t.zeros(2, foo=1)", TE, ("zeros() got an unexpected keyword argument 'foo'",)),
    ("zeros_overflow_int64", "t.zeros(2**63)", TE, ("failed to unpack the object at pos 1", "Overflow")),
    ("zeros_bool_size", "t.zeros(True)", TE, ("must be tuple of ints, not bool",)),
    ("zeros_negative", "t.zeros(2, -3)", RE, ("zeros: Dimension size must be non-negative.",)),
    ("zeros_storage_overflow", "t.zeros(2**62)", RE, ("Storage size calculation overflowed with sizes=[4611686018427387904]",)),
    ("zeros_storage_overflow_2d", "t.zeros(2**61, 4)", RE, ("Storage size calculation overflowed",)),
    ("ones_negative", "t.ones(-1)", RE, ("Trying to create tensor with negative dimension -1: [-1]",)),
    ("empty_negative", "t.empty(2, -1)", RE, ("negative dimension -1",)),
    ("empty_dtype_str", "t.empty((2, 2), dtype='float32')", TE, ("empty(): argument 'dtype' must be torch.dtype, not str",)),
    ("zeros_dtype_str", "t.zeros(2, dtype='int64')", TE, ("argument 'dtype' must be torch.dtype, not str",)),
    ("tensor_dtype_str", "t.tensor([1.0], dtype='float32')", TE, ("tensor(): argument 'dtype' must be torch.dtype, not str",)),
    ("zeros_like_dtype_str", "t.zeros_like(x, dtype='float32')", TE, ("zeros_like(): argument 'dtype' must be torch.dtype, not str",)),
    ("zeros_dtype_python_float", "t.zeros(2, dtype=float)", None, ()),
    ("zeros_dtype_python_int", "t.zeros(2, dtype=int)", None, ()),
    ("zeros_dtype_python_bool", "t.zeros(2, dtype=bool)", None, ()),
    ("empty_layout_str", "t.empty(2, layout='strided')", TE, ("empty(): argument 'layout' must be torch.layout, not str",)),
    ("empty_layout_strided", "t.empty(2, layout=t.strided)", None, ()),
    ("empty_device_float", "t.empty(2, device=1.5)", TE, ("empty(): argument 'device' must be torch.device, not float",)),
    ("empty_device_bad_string", "t.empty(2, device='xyz')", RE, ("device type at start of device string: xyz",)),
    ("zeros_device_index", "t.zeros(2, device=0)", RE, ("Cannot access accelerator device when none is available.",)),
    ("empty_requires_grad_str", "t.empty(2, requires_grad='a')", TE, ("argument 'requires_grad' must be bool, not str",)),
    ("empty_pin_memory_str", "t.empty(2, pin_memory='a')", TE, ("argument 'pin_memory' must be bool, not str",)),
    ("empty_pin_memory_false", "t.empty((2, 2), pin_memory=False)", None, ()),
    ("empty_pin_memory_true", "t.empty((2, 2), pin_memory=True)", RE, ("pin_memory=True requires a CUDA or other accelerator backend",)),
    ("zeros_pin_memory_true", "t.zeros(2, pin_memory=True)", RE, ("pin_memory=True requires",)),
    ("meta_pin_memory_true", "t.zeros(2, device='meta', pin_memory=True)", None, ()),
    ("empty_memory_format_str", "t.empty(2, memory_format='a')", TE, ("argument 'memory_format' must be torch.memory_format, not str",)),
    ("empty_memory_format_contiguous", "t.empty(2, memory_format=t.contiguous_format)", None, ()),
    ("empty_memory_format_preserve", "t.empty(2, memory_format=t.preserve_format)", RE, ("unsupported memory format Preserve",)),
    ("empty_channels_last_rank", "t.empty(2, memory_format=t.channels_last)", RE, ("required rank 4 tensor to use channels_last format",)),
    ("empty_channels_last_3d_rank", "t.empty(2, 2, memory_format=t.channels_last_3d)", RE, ("required rank 5 tensor to use channels_last_3d format",)),
    ("empty_channels_last_4d", "t.empty(1, 2, 3, 4, memory_format=t.channels_last)", None, ()),
    ("zeros_memory_format_kw", "t.zeros(2, memory_format=t.contiguous_format)", TE, ("zeros() got an unexpected keyword argument 'memory_format'",)),
    ("zeros_like_channels_last_rank", "t.zeros_like(x, memory_format=t.channels_last)", RE, ("required rank 4 tensor to use channels_last format",)),
    ("empty_like_preserve", "t.empty_like(x, memory_format=t.preserve_format)", None, ()),
    ("zeros_int_requires_grad", "t.zeros(2, dtype=t.int64, requires_grad=True)", RE, ("Only Tensors of floating point and complex dtype can require gradients",)),
    ("tensor_int_requires_grad", "t.tensor([1], requires_grad=True)", RE, ("Only Tensors of floating point and complex dtype can require gradients",)),
    ("zeros_all_keywords", "t.zeros(2, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=None)", None, ()),
    ("zeros_out", "t.zeros(2, out=t.empty(2))", None, ()),
    ("zeros_out_dtype_mismatch", "t.zeros(2, out=t.empty(2), dtype=t.int64)", RE, ("dtype Long does not match dtype of out parameter (Float)",)),
    ("zeros_out_device_mismatch", "t.zeros(2, out=t.empty(2), device='meta')", RE, ("device type meta does not match device type of out parameter (cpu)",)),
    ("zeros_out_requires_grad", "t.zeros(2, out=leaf)", RE, ("functions with out=... arguments don't support automatic differentiation",)),
    ("zeros_out_list", "t.zeros(2, out=[1])", TE, ("zeros(): argument 'out' must be Tensor, not list",)),
    ("full_str_fill", "t.full((2,), 'a')", TE, ("full(): argument 'fill_value' (position 2) must be Number, not str",)),
    ("full_none_fill", "t.full((2,), None)", TE, ("argument 'fill_value' (position 2) must be Number, not NoneType",)),
    ("full_int_size", "t.full(2, 1)", TE, ("full(): argument 'size' (position 1) must be tuple of ints, not int",)),
    ("full_missing_fill", "t.full((2,))", TE, ("full() missing 1 required positional arguments", '"fill_value"')),
    ("full_storage_overflow", "t.full((2**62,), 1)", RE, ("Storage size calculation overflowed",)),
    ("full_like_str_fill", "t.full_like(x, 'a')", TE, ("full_like(): argument 'fill_value' (position 2) must be Number, not str",)),
    ("zeros_like_list", "t.zeros_like([1])", TE, ("zeros_like(): argument 'input' (position 1) must be Tensor, not list",)),
    ("empty_like_two_positional", "t.empty_like(x, x)", TE, ("empty_like() takes 1 positional argument but 2 were given",)),
    ("ones_like_unknown_kw", "t.ones_like(x, foo=2)", TE, ("ones_like() got an unexpected keyword argument 'foo'",)),
    ("randn_like_unknown_kw", "t.randn_like(x, foo=2)", TE, ("randn_like() received an invalid combination of arguments - got (Tensor, foo=int)",)),
    ("rand_like_int", "t.rand_like(i)", NIE, ('"check_uniform_bounds" not implemented for', "Long")),
    ("rand_like_generator_none", "t.rand_like(x, generator=None)", None, ()),
    ("rand_generator_none", "t.rand(2, generator=None)", None, ()),
    ("rand_generator_int", "t.rand(2, generator=1)", TE, ("rand() received an invalid combination of arguments - got (int, generator=int)",)),
    ("randn_generator_str", "t.randn(2, generator='a')", TE, ("randn() received an invalid combination of arguments",)),
    ("rand_int_dtype", "t.rand(2, dtype=t.int32)", NIE, ('"check_uniform_bounds" not implemented for', "Int")),
    ("randn_int_dtype", "t.randn(2, dtype=t.int64)", NIE, ('"normal_kernel_cpu" not implemented for', "Long")),
    ("arange_str", "t.arange('a')", TE, ("arange(): argument 'end' (position 1) must be Number, not str",)),
    ("arange_too_many", "t.arange(1, 2, 3, 4, 5)", TE, ("arange() received an invalid combination of arguments - got (int, int, int, int, int)",)),
    ("arange_zero_step", "t.arange(0, 10, 0)", RE, ("step must be nonzero",)),
    ("arange_wrong_sign", "t.arange(10, 0, 1)", RE, ("upper bound and lower bound inconsistent with step sign",)),
    ("arange_nan", "t.arange(0, float('nan'))", RE, ("unsupported range: 0 -> nan",)),
    ("arange_huge", "t.arange(0, 1e20, 1e-20)", RE, ("invalid size, possible overflow?",)),
    ("arange_out", "t.arange(3, out=t.empty(3))", None, ()),
    ("linspace_negative_steps", "t.linspace(0, 1, -1)", RE, ("number of steps must be non-negative",)),
    ("linspace_str_steps", "t.linspace(0, 1, 'a')", TE, ("linspace() received an invalid combination of arguments - got (int, int, str)",)),
    ("linspace_missing_steps", "t.linspace(0, 1)", TE, ("linspace() received an invalid combination of arguments - got (int, int)",)),
    ("tensor_ragged", "t.tensor([[1, 2], [3]])", VE, ("expected sequence of length 2 at dim 1 (got 1)",)),
    ("tensor_ragged_deep", "t.tensor([[[1, 2]], [[3]]])", VE, ("expected sequence of length 2 at dim 2 (got 1)",)),
    ("tensor_ragged_longer", "t.tensor([[1], [2, 3]])", VE, ("expected sequence of length 1 at dim 1 (got 2)",)),
    ("tensor_list_where_int", "t.tensor([1, [2]])", TE, ("'list' object cannot be interpreted as an integer",)),
    ("tensor_tuple_where_float", "t.tensor([1.0, (2,)])", TE, ("must be real number, not tuple",)),
    ("tensor_list_where_bool", "t.tensor([1.0, [2]], dtype=t.bool)", TE, ("'list' object cannot be interpreted as an integer",)),
    ("tensor_ragged_float", "t.tensor([[1.0, 2.0], [3.0]], dtype=t.float32)", VE, ("expected sequence of length 2 at dim 1 (got 1)",)),
    ("tensor_unknown_kw", "t.tensor(1, foo=1)", TE, ("tensor() got an unexpected keyword argument 'foo'",)),
    ("tensor_layout_kw", "t.tensor([1.0], layout=t.strided)", TE, ("tensor() got an unexpected keyword argument 'layout'",)),
    ("tensor_object", "t.tensor(object())", RE, ("Could not infer dtype of object",)),
    ("tensor_str_element", "t.tensor([1, 'a'])", TE, ("invalid data type 'str'",)),
    ("tensor_all_keywords", "t.tensor([1, 2], dtype=t.float32, device='cpu', pin_memory=False, requires_grad=True)", None, ()),
    ("empty_strided_pin_memory", "t.empty_strided((2,), (1,), pin_memory=True)", RE, ("pin_memory=True requires",)),
    ("empty_strided_str_stride", "t.empty_strided((2,), 'a')", TE, ("empty_strided(): argument 'stride' (position 2) must be tuple of ints, not str",)),
    ("set_default_dtype_int", "t.set_default_dtype(t.int64)", TE, ("only floating-point types are supported as the default type",)),
    ("set_default_dtype_str", "t.set_default_dtype('float32')", TE, ("invalid dtype object: only floating-point types are supported as the default type",)),
    ("set_default_dtype_complex", "t.set_default_dtype(t.complex64)", TE, ("only floating-point types are supported as the default type",)),
    ("to_dtype_keyword_str", "x.to(dtype='float32')", TE, ("to() received an invalid combination of arguments - got (dtype=str, )",)),
    ("sum_dtype_str", "x.sum(dtype='float32')", TE, ("sum() received an invalid combination of arguments - got (dtype=str, )",)),
    ("aten_zeros_dtype_str", "t.ops.aten.zeros.default([2], dtype='float32')", RE, ("Expected a value of type 'Optional[int]' for argument 'dtype' but instead found type 'str'",)),
    ("meta_tolist", "t.empty(2, device='meta').tolist()", NIE, ("Cannot copy out of meta tensor; no data!",)),
    ("meta_item", "t.empty((), device='meta').item()", RE, ("Tensor.item() cannot be called on meta tensors",)),
    ("full_like_pin_memory", "t.full_like(x, 1.0, pin_memory=True)", RE, ("pin_memory=True requires",)),
    ("ones_like_device_bad", "t.ones_like(x, device='xyz')", RE, ("device type at start of device string: xyz",)),
    ("empty_device_bad_index", "t.empty(2, device='cpu:x')", RE, ("Invalid device string: 'cpu:x'",)),
    ("arange_bool_dtype", "t.arange(3, dtype=t.bool)", NIE, ('"arange_cpu" not implemented for', "Bool")),
    ("linspace_bool_dtype", "t.linspace(0, 1, 3, dtype=t.bool)", NIE, ('"linspace_cpu" not implemented for', "Bool")),
    ("tensor_not_a_sequence", "t.tensor([[1, 2], 3])", TE, ("not a sequence",)),
    ("tensor_empty_rows", "t.tensor([[], [1]])", None, ()),
    # --- operators: shapes, dtypes, dims -------------------------------------------------------
    ("add_shape_mismatch", "t.add(t.ones(2), t.ones(3))", RE, ("The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0",)),
    ("add_broadcast_mismatch_2d", "x + t.ones(2, 2)", RE, ("The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1",)),
    ("add_str", "x + 'a'", TE, ("unsupported operand type",)),
    ("sub_none", "x - None", TE, ("unsupported operand type(s) for -: 'Tensor' and 'NoneType'",)),
    ("lt_str", "x < 'a'", TE, ("'<' not supported between instances of 'Tensor' and 'str'",)),
    ("eq_str", "assert (x == 'a') is False and (x != None) is True", None, ()),
    ("rsub_str", "'a' - x", TE, ("unsupported operand type(s) for -: 'str' and 'Tensor'",)),
    ("rtruediv_none", "None / x", TE, ("unsupported operand type(s) for /: 'NoneType' and 'Tensor'",)),
    ("pow_str", "x ** 'a'", TE, ("unsupported operand type(s) for ** or pow(): 'Tensor' and 'str'",)),
    ("matmul_operator_str", "x @ 'a'", TE, ("unsupported operand type(s) for @: 'Tensor' and 'str'",)),
    ("iadd_none", "x += None", TE, ("unsupported operand type(s) for +=: 'Tensor' and 'NoneType'",)),
    ("add_list", "t.add(x, [1])", TE, ("add(): argument 'other' (position 2) must be Tensor, not list",)),
    ("add_input_str", "t.add('a', x)", TE, ("add(): argument 'input' (position 1) must be Tensor, not str",)),
    ("add_inplace_broadcast_self", "t.ones(3).add_(t.ones(2, 3))", RE, ("output with shape [3] doesn't match the broadcast shape [2, 3]",)),
    ("add_inplace_int_float", "i.add_(1.5)", RE, ("result type Float can't be cast to the desired output type Long",)),
    ("add_alpha_float_int", "t.add(i, i, alpha=1.5)", RE, ("For integral input tensors, argument alpha must not be a floating point number.",)),
    ("sub_bool", "t.ones(2, dtype=t.bool) - t.ones(2, dtype=t.bool)", RE, ("Subtraction, the `-` operator, with two bool tensors is not supported",)),
    ("mul_shape_mismatch", "t.mul(t.ones(4), t.ones(3))", RE, ("The size of tensor a (4) must match the size of tensor b (3)",)),
    ("div_out_int", "t.div(x, x, out=t.empty(2, 3, dtype=t.int64))", RE, ("result type Float can't be cast to the desired output type Long",)),
    ("mm_shape_mismatch", "t.mm(x, x)", RE, ("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)",)),
    ("mm_1d", "t.mm(v, v)", RE, ("self must be a matrix",)),
    ("mm_dtype_mismatch", "t.mm(x, y.double())", RE, ("expected m1 and m2 to have the same dtype, but got: float != double",)),
    ("bmm_2d", "t.bmm(x, y)", RE, ("batch1 must be a 3D tensor",)),
    ("matmul_mismatch", "t.matmul(x, x)", RE, ("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)",)),
    ("matmul_0d", "t.matmul(s, s)", RE, ("both arguments to matmul need to be at least 1D, but they are 0D and 0D",)),
    ("matmul_vec_mismatch", "t.matmul(v, t.ones(2))", RE, ("inconsistent tensor size, expected tensor [3] and src [2] to have the same number of elements, but got 3 and 2 elements respectively",)),
    ("matmul_operator_mismatch", "x @ x", RE, ("mat1 and mat2 shapes cannot be multiplied",)),
    ("cat_empty_list", "t.cat([])", VE, ("expected a non-empty list of Tensors",)),
    ("cat_not_list", "t.cat(x)", TE, ("cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor",)),
    ("cat_shape_mismatch", "t.cat([x, t.ones(2, 2)], dim=0)", RE, ("Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1 in the list.",)),
    ("cat_dim_out_of_range", "t.cat([x, x], dim=2)", IE, ("Dimension out of range (expected to be in range of [-2, 1], but got 2)",)),
    ("cat_0d", "t.cat([s, s])", RE, ("zero-dimensional tensor (at position 0) cannot be concatenated",)),
    ("cat_ndim_mismatch", "t.cat([x, v])", RE, ("Tensors must have same number of dimensions: got 2 and 1",)),
    ("stack_empty_list", "t.stack([])", RE, ("stack expects a non-empty TensorList",)),
    ("stack_shape_mismatch", "t.stack([x, y])", RE, ("stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at entry 1",)),
    ("stack_dim_out_of_range", "t.stack([v, v], dim=3)", IE, ("Dimension out of range (expected to be in range of [-2, 1], but got 3)",)),
    ("sum_dim_out_of_range", "x.sum(2)", IE, ("Dimension out of range (expected to be in range of [-2, 1], but got 2)",)),
    ("sum_dim_str", "t.sum(x, dim='a')", TE, ("sum() received an invalid combination of arguments - got (Tensor, dim=str)",)),
    ("sum_dim_float_method", "x.sum(dim=1.5)", TE, ("sum() received an invalid combination of arguments",)),
    ("sum_keepdim_without_dim", "t.sum(x, keepdim=True)", TE, ("sum() received an invalid combination of arguments - got (Tensor, keepdim=bool)",)),
    ("sum_dim_repeated", "x.sum((0, 0))", RE, ("dim 0 appears multiple times in the list of dims",)),
    ("mean_int", "i.mean()", RE, ("mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long",)),
    ("mean_dim_out_of_range", "x.mean(-3)", IE, ("Dimension out of range (expected to be in range of [-2, 1], but got -3)",)),
    ("amax_dim_out_of_range", "x.amax(5)", IE, ("Dimension out of range",)),
    ("argmax_dim_out_of_range", "x.argmax(2)", IE, ("Dimension out of range",)),
    ("max_empty", "t.ones(0).max()", RE, ("max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.",)),
    ("argmax_empty", "t.ones(0).argmax()", IE, ("Expected reduction dim to be specified for input.numel() == 0.",)),
    ("softmax_dim_out_of_range", "x.softmax(2)", IE, ("Dimension out of range (expected to be in range of [-2, 1], but got 2)",)),
    ("softmax_int", "i.softmax(0)", NIE, ('"softmax_lastdim_kernel_impl" not implemented for', "Long")),
    ("transpose_dim_out_of_range", "x.transpose(0, 2)", IE, ("Dimension out of range (expected to be in range of [-2, 1], but got 2)",)),
    ("squeeze_dim_out_of_range", "x.squeeze(3)", IE, ("Dimension out of range",)),
    ("unsqueeze_dim_out_of_range", "x.unsqueeze(4)", IE, ("Dimension out of range (expected to be in range of [-3, 2], but got 4)",)),
    ("select_index_out_of_range", "x.select(0, 5)", IE, ("select(): index 5 out of range for tensor of size [2, 3] at dimension 0",)),
    ("select_dim_out_of_range", "x.select(2, 0)", IE, ("Dimension out of range",)),
    ("permute_wrong_length", "x.permute(0)", RE, ("permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to len(dims) = 1",)),
    ("permute_repeated", "x.permute(0, 0)", RE, ("permute(): duplicate dims are not allowed.",)),
    ("t_3d", "t.ones(2, 2, 2).t()", RE, ("t() expects a tensor with <= 2 dimensions, but self is 3D",)),
    ("view_bad_size", "x.view(4)", RE, ("shape '[4]' is invalid for input of size 6",)),
    ("view_two_minus_one", "x.view(-1, -1)", RE, ("only one dimension can be inferred",)),
    ("view_negative", "x.view(-2, 3)", RE, ("invalid shape dimension -2",)),
    ("view_noncontiguous", "x.t().view(6)", RE, ("view size is not compatible with input tensor's size and stride",)),
    ("view_str", "x.view('a')", TE, ("view() received an invalid combination of arguments - got (str)",)),
    ("view_float", "x.view(2.5)", TE, ("view() received an invalid combination of arguments - got (float)",)),
    ("view_none", "x.view(None)", TE, ("view() received an invalid combination of arguments - got (NoneType)",)),
    ("reshape_method_str", "x.reshape('a')", TE, ("reshape(): argument 'shape' (position 1) must be tuple of ints, not str",)),
    ("mean_dim_str_method", "x.mean('a')", TE, ("mean() received an invalid combination of arguments - got (str)",)),
    ("sum_dtype_python_float", "assert x.sum(dtype=float).dtype == t.float64", None, ()),
    ("to_python_int", "assert x.to(int).dtype == t.int64", None, ()),
    ("to_type_str", "x.to(str)", TE, ("to() received an invalid combination of arguments - got (type)",)),
    ("reshape_bad_size", "t.reshape(x, (4,))", RE, ("shape '[4]' is invalid for input of size 6",)),
    ("reshape_float", "t.reshape(x, 2.5)", TE, ("reshape(): argument 'shape' (position 2) must be tuple of ints, not float",)),
    ("reshape_zero_numel_ambiguous", "t.ones(0).reshape(-1, 0)", RE, ("cannot reshape tensor of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and is ambiguous",)),
    ("expand_smaller", "x.expand(3)", RE, ("the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)",)),
    ("expand_mismatch", "x.expand(4, 3)", RE, ("The expanded size of the tensor (4) must match the existing size (2) at non-singleton dimension 0.  Target sizes: [4, 3].  Tensor sizes: [2, 3]",)),
    ("where_shape_mismatch", "t.where(t.ones(2) > 0, t.ones(3), t.ones(3))", RE, ("The size of tensor a (2) must match the size of tensor b (3)",)),
    ("where_cond_str", "t.where('a', x, x)", TE, ("where() received an invalid combination of arguments - got (str, Tensor, Tensor)",)),
    ("where_input_str", "t.where(x > 0, 'a', x)", TE, ("where() received an invalid combination of arguments - got (Tensor, str, Tensor)",)),
    ("clamp_no_bounds", "x.clamp()", RE, ("At least one of 'min' or 'max' must not be None",)),
    ("pow_int_negative", "i.pow(-1)", RE, ("Integers to negative integer powers are not allowed.",)),
    ("log_softmax_dim_out_of_range", "x.log_softmax(3)", IE, ("Dimension out of range",)),
    ("item_multi_element", "x.item()", RE, ("a Tensor with 6 elements cannot be converted to Scalar",)),
    ("size_dim_out_of_range", "x.size(2)", IE, ("Dimension out of range (expected to be in range of [-2, 1], but got 2)",)),
    ("as_strided_out_of_bounds", "x.as_strided((4,), (2,))", RE, ("out of bounds for storage of size 24",)),
    ("copy_broadcast_fail", "x.clone().copy_(t.ones(4))", RE, ("The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",)),
    ("to_dtype_str", "x.to('float64')", RE, ("Invalid device string: 'float64'",)),
    ("to_bad_device_type", "x.to('xyz')", RE, ("device type at start of device string: xyz",)),
    ("to_bad_device_index", "x.to('cpu:x')", RE, ("Invalid device string: 'cpu:x'",)),
    ("mse_loss_reduction", "F.mse_loss(x, x, reduction='bad')", VE, ("bad is not a valid value for reduction",)),
    ("nll_loss_target_dtype", "F.nll_loss(x, t.zeros(2))", RE, ("expected target dtype to be Long or Byte, but got Float",)),
    ("mul_device_mismatch", "x * t.ones(2, 3, device='meta')", RE, ("is not on the expected device",)),
    # --- indexing --------------------------------------------------------------------------------
    ("index_out_of_range", "x[5]", IE, ("index 5 is out of bounds for dimension 0 with size 2",)),
    ("index_negative_out_of_range", "x[-3]", IE, ("index -3 is out of bounds for dimension 0 with size 2",)),
    ("index_second_dim_out_of_range", "x[0, 7]", IE, ("index 7 is out of bounds for dimension 1 with size 3",)),
    ("index_too_many", "x[0, 0, 0]", IE, ("too many indices for tensor of dimension 2",)),
    ("index_too_many_with_slice", "x[0, :, 0]", IE, ("too many indices for tensor of dimension 2",)),
    ("index_after_none_out_of_range", "x[None, 5]", IE, ("index 5 is out of bounds for dimension 1 with size 2",)),
    ("index_after_ellipsis_out_of_range", "x[..., -4]", IE, ("index -4 is out of bounds for dimension 1 with size 3",)),
    ("index_0d", "s[0]", IE, ("invalid index of a 0-dim tensor. Use `tensor.item()`",)),
    ("index_0d_slice", "s[:]", IE, ("slice() cannot be applied to a 0-dim tensor.",)),
    ("index_0d_too_many", "s[0, 0]", IE, ("too many indices for tensor of dimension 0",)),
    ("setitem_0d_index", "s[0] = 1.0", IE, ("invalid index of a 0-dim tensor",)),
    ("index_str", "x['a']", TE, ("invalid data type 'str'",)),
    ("index_float", "x[1.5]", IE, ("only integers, slices", "(got float)")),
    ("index_object", "x[object()]", IE, ("only integers, slices", "(got object)")),
    ("index_two_ellipsis", "x[..., ...]", None, ()),
    ("index_ellipsis_int_ellipsis", "assert x[..., 0, ...].shape == (2,)", None, ()),
    ("index_slice_zero_step", "x[::0]", VE, ("slice step cannot be zero",)),
    ("index_negative_step", "x[::-1]", VE, ("step must be greater than zero",)),
    ("index_tensor_out_of_range", "v[t.tensor([5])]", IE, ("index 5 is out of bounds for dimension 0 with size 3",)),
    ("index_bool_mask_shape", "v[t.tensor([True, False])]", IE, ("The shape of the mask [2] at index 0 does not match the shape of the indexed tensor [3] at index 0",)),
    ("index_float_tensor", "v[t.tensor([0.0])]", IE, ("tensors used as indices must be long, int, byte or bool tensors",)),
    ("setitem_out_of_range", "x[5] = 1.0", IE, ("index 5 is out of bounds for dimension 0 with size 2",)),
    ("setitem_shape_mismatch", "x[0] = t.ones(4)", RE, ("The expanded size of the tensor (3) must match the existing size (4) at non-singleton dimension 0.  Target sizes: [3].  Tensor sizes: [4]",)),
    ("setitem_str_value", "x[0] = 'a'", TE, ("can't assign a str to a torch.FloatTensor",)),
    ("setitem_none_value", "x[0] = None", TE, ("can't assign a NoneType to a torch.FloatTensor",)),
    ("setitem_list_value", "x[0] = [1, 2, 3]", TE, ("can't assign a list to a torch.FloatTensor",)),
    ("setitem_value_more_dims", "x[0] = t.ones(2, 3)", RE, ("the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)",)),
    ("setitem_slice_shape_mismatch", "x[:] = t.ones(3, 3)", RE, ("The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  Target sizes: [2, 3].  Tensor sizes: [3, 3]",)),
    ("setitem_leading_ones_dropped", "x[0] = t.ones(1, 3)", None, ()),
    ("setitem_leading_ones_ellipsis", "v[...] = t.ones(1, 1, 3)", None, ()),
    ("setitem_leading_ones_then_mismatch", "v[...] = t.ones(1, 2, 3)", RE, ("expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)",)),
    ("setitem_number_overflows_uint8", "t.zeros(3, dtype=t.uint8)[0] = 300", RE, ("value cannot be converted to type uint8_t without overflow",)),
    ("setitem_complex_into_float", "x[0] = 1 + 2j", RE, ("value cannot be converted to type float without overflow",)),
    ("setitem_int_beyond_int64", "x[0] = 2**70", VE, ("Overflow when unpacking long long",)),
    ("mul_int_beyond_uint64", "x * 2**70", OverflowError, ("int too big to convert",)),
    ("add_int_below_int64", "i + (-2**63 - 1)", OverflowError, ("can't convert negative int to unsigned",)),
    ("mul__int_beyond_uint64", "x.mul_(2**64)", OverflowError, ("int too big to convert",)),
    ("len_0d", "len(s)", TE, ("len() of a 0-d tensor",)),
    ("iter_0d", "iter(s)", TE, ("iteration over a 0-d tensor",)),
    ("bool_ambiguous", "bool(x)", RE, ("Boolean value of Tensor with more than one value is ambiguous",)),
    ("int_multi_element", "int(x)", VE, ("only one element tensors can be converted to Python scalars",)),
    ("float_multi_element", "float(v)", VE, ("only one element tensors can be converted to Python scalars",)),
    # --- autograd --------------------------------------------------------------------------------
    ("backward_non_scalar", "(leaf * 2).backward()", RE, ("grad can be implicitly created only for scalar outputs",)),
    ("backward_no_grad_fn", "x.sum().backward()", RE, ("element 0 of tensors does not require grad and does not have a grad_fn",)),
    ("backward_twice", "out = (leaf * leaf).sum(); out.backward(); out.backward()", RE, ("Trying to backward through the graph a second time",)),
    ("backward_grad_shape", "(leaf * 2).backward(t.ones(3))", RE, ("Mismatch in shape: grad_output[0] has a shape of", "Size([3]) and output[0] has a shape of")),
    ("backward_grad_not_tensor", "(leaf * 2).sum().backward(1.0)", TE, ()),
    ("grad_not_requiring_grad", "t.autograd.grad(x.sum(), x)", RE, ("element 0 of tensors does not require grad and does not have a grad_fn",)),
    ("grad_input_unused", "a = t.ones(2, requires_grad=True); t.autograd.grad((leaf * 2).sum(), a)", RE, ("appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",)),
    ("grad_input_unused_allowed", "a = t.ones(2, requires_grad=True); t.autograd.grad((leaf * 2).sum(), a, allow_unused=True)", None, ()),
    ("grad_non_scalar", "t.autograd.grad(leaf * 2, leaf)", RE, ("grad can be implicitly created only for scalar outputs",)),
    ("grad_input_not_requiring_grad", "t.autograd.grad((leaf * 2).sum(), x)", RE, ("One of the differentiated Tensors does not require grad",)),
    ("grad_assign_wrong_shape", "leaf.grad = t.ones(3)", RE, ("attempting to assign a gradient of size '[3]' to a tensor of size '[2]'",)),
    ("grad_assign_wrong_dtype", "leaf.grad = t.ones(2, dtype=t.float64)", RE, ("attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'",)),
    ("grad_assign_not_tensor", "leaf.grad = 1.0", TE, ("assigned grad expected to be a Tensor or None but got grad of type float",)),
    ("grad_assign_device", "leaf.grad = t.ones(2, device='meta')", RE, ("attempting to assign a gradient with device type 'meta' to a tensor with device type 'cpu'",)),
    ("inplace_leaf_requires_grad", "leaf.add_(1)", RE, ("a leaf Variable that requires grad is being used in an in-place operation.",)),
    ("inplace_leaf_mul", "leaf.mul_(2)", RE, ("a leaf Variable that requires grad is being used in an in-place operation.",)),
    ("inplace_leaf_no_grad", "with t.no_grad(): leaf.add_(1)", None, ()),
    ("inplace_view_of_leaf", "leaf[0].add_(1)", RE, ("a view of a leaf Variable that requires grad is being used in an in-place operation.",)),
    ("inplace_saved_tensor_modified", "a = leaf * 1; b = a.sin(); a.add_(1); b.sum().backward()", RE, ("one of the variables needed for gradient computation has been modified by an inplace operation",)),
    ("requires_grad_int", "i.requires_grad_()", RE, ("only Tensors of floating point dtype can require gradients",)),
    ("requires_grad_attr_int", "i.requires_grad = True", RE, ("only Tensors of floating point and complex dtype can require gradients",)),
    ("requires_grad_non_leaf_false", "(leaf * 2).requires_grad_(False)", RE, ("you can only change requires_grad flags of leaf variables.",)),
    ("detach_inplace_view", "leaf[0].detach_()", RE, ("Can't detach views in-place. Use detach() instead.",)),
    ("retain_grad_no_grad", "x.retain_grad()", RE, ("can't retain_grad on Tensor that has requires_grad=False",)),
    ("register_hook_no_grad", "x.register_hook(lambda g: g)", RE, ("cannot register a hook on a tensor that doesn't require gradient",)),
    ("numpy_requires_grad", "leaf.numpy()", RE, ("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",)),
    ("out_requires_grad", "t.exp(leaf, out=t.empty(2, requires_grad=True))", RE, ("functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",)),
    # --- autograd.Function ctx misuse -------------------------------------------------------------
    ("function_save_non_tensor", (
        "class G(t.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        ctx.save_for_backward(1)\n"
        "        return a * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g\n"
        "G.apply(leaf)"), TE, ("save_for_backward can only save variables, but argument 0 is of type int",)),
    ("function_too_many_grads", (
        "class G(t.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        return a * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g, g\n"
        "G.apply(leaf).sum().backward()"), RE, ("function GBackward returned an incorrect number of gradients (expected 1, got 2)",)),
    ("function_wrong_grad_shape", (
        "class G(t.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        return a * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return t.ones(3)\n"
        "G.apply(leaf).sum().backward()"), RE, ("Function GBackward returned an invalid gradient at index 0 - got [3] but expected shape compatible with [2]",)),
    ("function_backward_not_implemented", (
        "class G(t.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        return a * 2\n"
        "G.apply(leaf).sum().backward()"), NIE, ("You must implement either the backward or vjp method for your custom autograd.Function to use it with backward mode AD.",)),
    ("function_forward_not_implemented", (
        "class G(t.autograd.Function):\n"
        "    pass\n"
        "G.apply(leaf)"), NIE, ("You must implement the forward function for custom autograd.Function.",)),
    ("function_instantiate_apply", (
        "class G(t.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        return a\n"
        "G()(leaf)"), RE, ("Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd function with static forward method.",)),
    ("function_saved_tensors_twice", (
        "class G(t.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        ctx.save_for_backward(a)\n"
        "        return a * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g * ctx.saved_tensors[0]\n"
        "out = G.apply(leaf).sum(); out.backward(); out.backward()"), RE, ("Trying to backward through the graph a second time",)),
    ("function_mark_dirty_non_input", (
        "class G(t.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        b = a * 2\n"
        "        ctx.mark_dirty(b)\n"
        "        return b\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g\n"
        "G.apply(leaf)"), None, ()),
    # --- registration ------------------------------------------------------------------------------
    ("library_bad_kind", "t.library.Library(NS, 'BAD')", ValueError, ("Unsupported kind: BAD",)),
    ("library_def_twice", "L('DEF'); L('DEF')", RE, ("Only a single TORCH_LIBRARY can be used to register the namespace",)),
    ("library_bad_namespace", "t.library.Library('a.b', 'DEF')", None, ()),
    ("library_dotted_namespace_op", "lib = t.library.Library(NS + '.sub', 'DEF'); lib.define('f(Tensor x) -> Tensor'); lib.impl('f', lambda x: x, 'CPU'); getattr(t.ops, NS + '.sub').f(x); lib._destroy()", None, ()),
    ("library_wildcard_def", "t.library.Library('_', 'DEF')", RE, ("bad optional access",)),
    ("library_wildcard_fragment", "t.library.Library('_', 'FRAGMENT')", RE, ("TORCH_LIBRARY_FRAGMENT: cannot define TORCH_LIBRARY_FRAGMENT with the wildcard namespace _",)),
    ("library_prim_fragment", "t.library.Library('prim', 'FRAGMENT')", VE, ("prim is a reserved namespace",)),
    ("define_twice", "lib = L('DEF'); lib.define('f(Tensor x) -> Tensor'); lib.define('f(Tensor x) -> Tensor')", RE, ("Tried to register an operator", "with the same name and overload name multiple times.")),
    ("define_bad_schema", "L('DEF').define('f(Tensor x)')", RE, ("expected arrow but found 'eof' here",)),
    ("define_bad_type", "L('DEF').define('f(Tenser x) -> Tensor')", RE, ("unknown type specifier", "f(Tenser x) -> Tensor")),
    ("define_default_order", "L('DEF').define('f(int a=1, int b) -> ()')", RE, ("Non-default positional argument follows default argument",)),
    ("define_in_impl_library", "L('DEF'); lib = L('IMPL'); lib.define('f(Tensor x) -> Tensor')", RE, ("Cannot define an operator inside of a TORCH_LIBRARY_IMPL block",)),
    ("define_other_namespace", "L('DEF').define('other_ns_xyz::f(Tensor x) -> Tensor')", RE, ("Explicitly provided namespace (other_ns_xyz) in schema string does not match namespace",)),
    ("impl_unknown_key", "lib = L('DEF'); lib.define('f(Tensor x) -> Tensor'); lib.impl('f', lambda x: x, 'NotAKey')", RE, ("NotAKey",)),
    ("impl_non_callable", "lib = L('DEF'); lib.define('f(Tensor x) -> Tensor'); lib.impl('f', 3, 'CPU')", TE, ("Input function is required to be a callable but found type",)),
    ("impl_twice", "lib = L('DEF'); lib.define('f(Tensor x) -> Tensor'); lib.impl('f', lambda x: x, 'CPU', allow_override=False); lib.impl('f', lambda x: x, 'CPU', allow_override=False)", RE, ("This is not allowed since there's already a kernel registered from python overriding",)),
    ("fallback_outside_underscore", "L('DEF').fallback(lambda *a: None, 'CPU')", RE, ('Fallback can only be registered using library fragment on the global namespace "_" but it is',)),
    ("destroyed_library_define", "lib = L('DEF'); lib._destroy(); lib.define('f(Tensor x) -> Tensor')", AssertionError, ("Library object has been destroyed",)),
    ("call_undefined_op", "getattr(getattr(t.ops, NS), 'nope')", AttributeError, ("has no attribute 'nope'",)),
    ("call_op_missing_kernel", "lib = L('DEF'); lib.define('f(Tensor x) -> Tensor'); getattr(t.ops, NS).f(x)", NIE, ("Could not run", "with arguments from the 'CPU' backend")),
    ("call_op_wrong_arg_type", "lib = L('DEF'); lib.define('f(Tensor x, int n) -> Tensor'); lib.impl('f', lambda x, n: x, 'CPU'); getattr(t.ops, NS).f(x, 'a')", RE, ("Expected a value of type 'int' for argument 'n' but instead found type 'str'",)),
    ("call_op_too_many_args", "lib = L('DEF'); lib.define('f(Tensor x) -> Tensor'); lib.impl('f', lambda x: x, 'CPU'); getattr(t.ops, NS).f(x, x)", RE, ("f() expected at most 1 argument(s) but received 2 argument(s)",)),
    ("call_op_unknown_kwarg", "lib = L('DEF'); lib.define('f(Tensor x) -> Tensor'); lib.impl('f', lambda x: x, 'CPU'); getattr(t.ops, NS).f(x, y=1)", RE, ("f() expected at most 1 argument(s) but received 2 argument(s)",)),
    ("call_op_missing_arg", "lib = L('DEF'); lib.define('f(Tensor x, Tensor y) -> Tensor'); lib.impl('f', lambda x, y: x, 'CPU'); getattr(t.ops, NS).f(x)", RE, ("f() is missing value for argument 'y'",)),
    ("aten_view_str", "t.ops.aten.view.default(x, 'a')", RE, ("Expected a value of type 'List[int]' for argument 'size' but instead found type 'str'",)),
    ("aten_sum_dim_str", "t.ops.aten.sum.dim_IntList(x, 'a')", RE, ("Expected a value of type 'Optional[List[int]]' for argument 'dim' but instead found type 'str'",)),
    ("aten_zeros_str", "t.ops.aten.zeros.default('a')", RE, ("Expected a value of type 'List[int]' for argument 'size' but instead found type 'str'",)),
    ("aten_full_str_fill", "t.ops.aten.full.default([2], 'a')", RE, ("Expected a value of type 'number' for argument 'fill_value' but instead found type 'str'",)),
    # operator handles bind before they dispatch (See Note [Bind on failure]): every path of the call
    ("aten_view_float_in_list", "t.ops.aten.view.default(x, [2.5])", RE, ("aten::view() Expected a value of type 'List[int]' for argument 'size' but instead found type 'list'.", "Value: [2.5]", "Cast error details: Unable to cast Python instance of type <class 'float'>")),
    ("aten_view_str_in_list", "t.ops.aten.view.default(x, ['a'])", RE, ("Expected a value of type 'List[int]' for argument 'size' but instead found type 'list'",)),
    ("aten_view_str_keyword", "t.ops.aten.view.default(x, size='a')", RE, ("aten::view() Expected a value of type 'List[int]' for argument 'size' but instead found type 'str'.\nPosition: 1\nValue: 'a'\nDeclaration: aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",)),
    ("aten_view_bad_shape", "t.ops.aten.view.default(x, [4])", RE, ("shape '[4]' is invalid for input of size 6",)),
    ("aten_view_numpy_int", "import numpy as np; t.ops.aten.view.default(x, [np.int64(6)])", None, ()),
    ("aten_sum_dim_str_keyword", "t.ops.aten.sum.dim_IntList(x, dim='a')", RE, ("Expected a value of type 'Optional[List[int]]' for argument 'dim' but instead found type 'str'",)),
    ("aten_sum_keepdim_str", "t.ops.aten.sum.dim_IntList(x, [0], 'a')", RE, ("Expected a value of type 'bool' for argument 'keepdim' but instead found type 'str'",)),
    ("aten_sum_dim_int", "t.ops.aten.sum.dim_IntList(x, 0)", None, ()),
    ("aten_sum_after_good_call", "f = t.ops.aten.sum.dim_IntList; f(x, [0]); f(x, [0]); f(x, 'a')", RE, ("Expected a value of type 'Optional[List[int]]' for argument 'dim'",)),
    ("aten_select_float_index", "t.ops.aten.select.int(x, 0, 1.0)", RE, ("aten::select() Expected a value of type 'int' for argument 'index' but instead found type 'float'",)),
    ("aten_select_out_of_range", "t.ops.aten.select.int(x, 0, 5)", IE, ("select(): index 5 out of range for tensor of size [2, 3] at dimension 0",)),
    ("aten_add_alpha_str", "t.ops.aten.add.Tensor(x, x, alpha='a')", RE, ("aten::add() Expected a value of type 'number' for argument 'alpha' but instead found type 'str'", "Cast error details: Cannot cast a to number")),
    ("aten_add_scalar_str", "t.ops.aten.add.Scalar(x, 'a')", RE, ("Expected a value of type 'number' for argument 'other' but instead found type 'str'",)),
    ("aten_full_numpy_fill", "import numpy as np; t.ops.aten.full.default([2], np.float32(1.0))", RE, ("Expected a value of type 'number' for argument 'fill_value' but instead found type 'float32'",)),
    ("aten_zeros_dtype_python_float", "t.ops.aten.zeros.default([2], dtype=float)", RE, ("Expected a value of type 'Optional[int]' for argument 'dtype' but instead found type 'type'",)),
    ("aten_zeros_dtype_int", "t.ops.aten.zeros.default([2], dtype=6)", None, ()),
    ("aten_zeros_dtype_layout", "t.ops.aten.zeros.default([2], dtype=t.strided)", RE, ("Expected a value of type 'Optional[int]' for argument 'dtype' but instead found type 'layout'",)),
    ("aten_zeros_layout_str", "t.ops.aten.zeros.default([2], layout='strided')", RE, ("Expected a value of type 'Optional[int]' for argument 'layout' but instead found type 'str'",)),
    ("aten_zeros_device_index", "t.ops.aten.zeros.default([2], device=0)", RE, ("Expected a value of type 'Optional[Device]' for argument 'device' but instead found type 'int'",)),
    ("aten_zeros_device_str", "t.ops.aten.zeros.default([2], device='cpu')", None, ()),
    ("aten_zeros_pin_memory_str", "t.ops.aten.zeros.default([2], pin_memory='a')", RE, ("Expected a value of type 'Optional[bool]' for argument 'pin_memory' but instead found type 'str'",)),
    ("aten_empty_memory_format_str", "t.ops.aten.empty.memory_format([2], memory_format='x')", RE, ("Expected a value of type 'Optional[int]' for argument 'memory_format' but instead found type 'str'",)),
    ("aten_to_copy_dtype_str", "t.ops.aten._to_copy.default(x, dtype='float32')", RE, ("aten::_to_copy() Expected a value of type 'Optional[int]' for argument 'dtype' but instead found type 'str'",)),
    ("aten_packet_str", "t.ops.aten.sum(x, 'a')", RE, ("failed to match any schema", "aten::sum() Expected a value of type 'Optional[List[int]]' for argument 'dim' but instead found type 'str'")),
    ("call_op_wrong_arg_type_after_good_call", "lib = L('DEF'); lib.define('f(Tensor x, int n) -> Tensor'); lib.impl('f', lambda x, n: x, 'CPU'); f = getattr(t.ops, NS).f; f(x, 1); f(x, 1); f(x, 'a')", RE, ("f() Expected a value of type 'int' for argument 'n' but instead found type 'str'",)),
    ("call_op_kernel_type_error", "def k(x, n):\n    raise TypeError('the kernel refuses n=%d' % n)\nlib = L('DEF'); lib.define('f(Tensor x, int n) -> Tensor'); lib.impl('f', k, 'CPU'); f = getattr(t.ops, NS).f\ntry:\n    f(x, 1)\nexcept TypeError:\n    pass\nf(x, 2)", TE, ("the kernel refuses n=2",)),
    # --- guards and modes ---------------------------------------------------------------------------
    ("inference_tensor_requires_grad", "with t.inference_mode():\n    a = t.ones(2)\na.requires_grad_()", RE, ("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.",)),
    ("inference_tensor_inplace_outside", "with t.inference_mode():\n    a = t.ones(2)\na.add_(1)", RE, ("Inplace update to inference tensor outside InferenceMode is not allowed.",)),
    ("inference_tensor_inplace_inside", "with t.inference_mode():\n    a = t.ones(2)\n    a.add_(1)", None, ()),
    ("inference_tensor_saved_for_backward", "with t.inference_mode():\n    a = t.ones(2)\n(leaf * a).sum().backward()", RE, ("Inference tensors cannot be saved for backward.",)),
    ("inference_tensor_view_inplace", "with t.inference_mode():\n    a = t.ones(2, 2)\na[0].add_(1)", RE, ("Inplace update to inference tensor outside InferenceMode is not allowed.",)),
    ("inference_mode_positional_str", "t.inference_mode('a')", None, ()),
    ("no_grad_inplace_view_then_grad", "a = leaf * 1\nwith t.no_grad():\n    b = a[0]\nb.add_(1)", RE, ("A view was created in no_grad mode and is being modified inplace with grad mode enabled.",)),
    ("view_of_inference_in_normal_inplace", "with t.inference_mode():\n    a = t.ones(2)\nb = a.view(2)\nb.mul_(2)", RE, ("Inplace update to inference tensor outside InferenceMode is not allowed.",)),
    ("unbind_view_inplace", "a = leaf * 1\nb = a.unsqueeze(0).expand(2, 2)\nb.add_(1)", RE, ("unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.",)),
    ("set_grad_enabled_str", "t.set_grad_enabled('a')", TE, ("set_grad_enabled()",)),
]


class _Libraries:
    """``L(kind)``: a Library on this case's fresh namespace; all destroyed after the case."""

    _counter = itertools.count()

    def __init__(self, library_class: Any) -> None:
        self.library_class = library_class
        self.made: list[Any] = []
        self.ns = f"_bad_inputs_{next(self._counter)}"

    def __call__(self, kind: str) -> Any:
        lib = self.library_class(self.ns, kind)
        self.made.append(lib)
        return lib

    def destroy(self) -> None:
        for lib in reversed(self.made):
            try:
                lib._destroy()
            except Exception:  # noqa: S110 - already destroyed by the case itself
                pass


def environment(module: Any, library_class: Any) -> tuple[dict[str, Any], _Libraries]:
    """The names a program sees, built fresh for each case."""
    libraries = _Libraries(library_class)
    env = {
        "t": module, "F": module.nn.functional,
        "x": module.ones(2, 3), "y": module.ones(3, 2), "v": module.ones(3),
        "i": module.arange(6), "s": module.tensor(1.0),
        "leaf": module.ones(2, requires_grad=True),
        "L": libraries, "NS": libraries.ns,
    }
    return env, libraries


def run(program: str, module: Any, library_class: Any) -> BaseException | None:
    """Run ``program`` against ``module``; the exception it raised, or None.

    Warnings are not under test (torch and dispatchcore both warn in some cases), so they are
    ignored rather than turned into errors.
    """
    env, libraries = environment(module, library_class)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(program, "<bad input>", "exec"), env)  # noqa: S102 - the corpus is ours
    except Exception as exc:
        return exc
    finally:
        libraries.destroy()
    return None


def cold_memos(dc: Any) -> None:
    """Empty every operator's dispatch memo (Note [Dispatch memo]) and the matmul shortcut's.

    A call that misses the memo takes a slower path, which raises from other frames; emptying
    the memos before each case makes the outcome independent of the cases run before it.
    """
    for op in dc.get_dispatcher().operators():
        for memo in op._dispatch[2:]:
            memo.clear()
    dc._composites._shortcut_memo.clear()


def programs(case: tuple[str, Any, Any, tuple[str, ...]]) -> tuple[str, str]:
    """The (torch, dispatchcore) sources of a case."""
    program = case[1]
    return (program, program) if isinstance(program, str) else program


# The exception classes compared; the first that matches names the family.
FAMILIES: tuple[type[BaseException], ...] = (
    NotImplementedError, IndexError, KeyError, ValueError, TypeError, AttributeError,
    AssertionError, RuntimeError,
)


def family(exc: BaseException | None) -> type[BaseException] | None:
    """The torch exception family of ``exc`` (None for no exception)."""
    if exc is None:
        return None
    return next((f for f in FAMILIES if isinstance(exc, f)), type(exc))





# Cases where dispatchcore still differs from torch, each with the exact difference and the file
# where the fix belongs. Both tests mark them strict xfails: when a fix lands, the xpass fails
# the run, and the entry is to be deleted here.
KNOWN_OPEN: dict[str, str] = {}


def params(pytest: Any) -> list[Any]:
    """The cases as pytest params, with a strict xfail on each known difference."""
    unknown = set(KNOWN_OPEN) - {case[0] for case in CASES}
    assert not unknown, f"KNOWN_OPEN names no case: {sorted(unknown)}"
    return [
        pytest.param(case, id=case[0], marks=[pytest.mark.xfail(strict=True, reason=KNOWN_OPEN[case[0]])]
                     if case[0] in KNOWN_OPEN else [])
        for case in CASES
    ]


def check(case: tuple[str, Any, Any, tuple[str, ...]], expected: type[BaseException] | None,
          exc: BaseException | None, who: str) -> None:
    """``exc`` is of the ``expected`` family and carries the key words; dispatchcore's chains nothing.

    No internal exception may leak: a dispatchcore error has neither ``__cause__`` nor
    ``__context__`` (even ``raise ... from None`` keeps the internal one as ``__context__``).
    """
    name, _, _, keys = case
    got = family(exc)
    assert got is expected, (
        f"{name}: {who} raised {type(exc).__name__ if exc else 'nothing'} "
        f"({exc!s:.300}), expected {expected.__name__ if expected else 'success'}")
    if exc is None:
        return
    for key in keys:
        assert key in str(exc), f"{name}: {who}'s message lacks {key!r}: {exc!s:.500}"
    inner = exc.__cause__ or exc.__context__
    assert who == "torch" or inner is None, (
        f"{name}: {who}'s {type(exc).__name__} chains {type(inner).__name__}: {inner!s:.200}")
