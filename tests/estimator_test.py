
#
 
C
o
p
y
r
i
g
h
t
 
2
0
2
6
 
T
h
e
 
c
o
n
t
r
i
b
_
m
i
x
e
d
_
p
r
e
c
i
s
i
o
n
 
A
u
t
h
o
r
s
.


#


#
 
L
i
c
e
n
s
e
d
 
u
n
d
e
r
 
t
h
e
 
A
p
a
c
h
e
 
L
i
c
e
n
s
e
,
 
V
e
r
s
i
o
n
 
2
.
0
 
(
t
h
e
 
"
L
i
c
e
n
s
e
"
)
;


#
 
y
o
u
 
m
a
y
 
n
o
t
 
u
s
e
 
t
h
i
s
 
f
i
l
e
 
e
x
c
e
p
t
 
i
n
 
c
o
m
p
l
i
a
n
c
e
 
w
i
t
h
 
t
h
e
 
L
i
c
e
n
s
e
.


#
 
Y
o
u
 
m
a
y
 
o
b
t
a
i
n
 
a
 
c
o
p
y
 
o
f
 
t
h
e
 
L
i
c
e
n
s
e
 
a
t


#


#
 
 
 
 
 
h
t
t
p
:
/
/
w
w
w
.
a
p
a
c
h
e
.
o
r
g
/
l
i
c
e
n
s
e
s
/
L
I
C
E
N
S
E
-
2
.
0


#


#
 
U
n
l
e
s
s
 
r
e
q
u
i
r
e
d
 
b
y
 
a
p
p
l
i
c
a
b
l
e
 
l
a
w
 
o
r
 
a
g
r
e
e
d
 
t
o
 
i
n
 
w
r
i
t
i
n
g
,
 
s
o
f
t
w
a
r
e


#
 
d
i
s
t
r
i
b
u
t
e
d
 
u
n
d
e
r
 
t
h
e
 
L
i
c
e
n
s
e
 
i
s
 
d
i
s
t
r
i
b
u
t
e
d
 
o
n
 
a
n
 
"
A
S
 
I
S
"
 
B
A
S
I
S
,


#
 
W
I
T
H
O
U
T
 
W
A
R
R
A
N
T
I
E
S
 
O
R
 
C
O
N
D
I
T
I
O
N
S
 
O
F
 
A
N
Y
 
K
I
N
D
,
 
e
i
t
h
e
r
 
e
x
p
r
e
s
s
 
o
r
 
i
m
p
l
i
e
d
.


#
 
S
e
e
 
t
h
e
 
L
i
c
e
n
s
e
 
f
o
r
 
t
h
e
 
s
p
e
c
i
f
i
c
 
l
a
n
g
u
a
g
e
 
g
o
v
e
r
n
i
n
g
 
p
e
r
m
i
s
s
i
o
n
s
 
a
n
d


#
 
l
i
m
i
t
a
t
i
o
n
s
 
u
n
d
e
r
 
t
h
e
 
L
i
c
e
n
s
e
.


#
 
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=
=


"
"
"
E
n
d
 
t
o
 
e
n
d
:
 
E
s
t
i
m
a
t
o
r
 
p
r
o
g
r
a
m
s
 
t
r
a
i
n
 
w
i
t
h
 
t
h
e
 
L
S
O
 
b
u
i
l
t
 
i
n
 
`
m
o
d
e
l
_
f
n
`
.




`
t
e
s
t
s
/
p
r
o
g
r
a
m
s
/
e
s
t
i
m
a
t
o
r
_
t
r
a
i
n
.
p
y
`
 
r
u
n
s
 
i
n
 
i
t
s
 
o
w
n
 
p
r
o
c
e
s
s
,
 
o
n
c
e
 
w
i
t
h
 
t
h
e


m
a
n
a
g
e
r
 
b
u
i
l
t
 
i
n
s
i
d
e
 
`
m
o
d
e
l
_
f
n
`
 
a
n
d
 
o
n
c
e
 
w
i
t
h
 
o
n
e
 
m
a
n
a
g
e
r
 
b
u
i
l
t
 
o
u
t
s
i
d
e
 
a
n
d


s
h
a
r
e
d
 
b
y
 
e
v
e
r
y
 
`
t
r
a
i
n
(
)
`
 
c
a
l
l
.
 
E
a
c
h
 
r
u
n
 
t
r
a
i
n
s
 
o
n
e
 
m
o
d
e
l
 
d
i
r
e
c
t
o
r
y
 
w
i
t
h


t
w
o
 
`
t
r
a
i
n
(
)
`
 
c
a
l
l
s
 
(
t
h
e
 
s
e
c
o
n
d
 
r
e
s
t
o
r
e
s
 
t
h
e
 
f
i
r
s
t
'
s
 
c
h
e
c
k
p
o
i
n
t
)
 
a
n
d
 
a
n
o
t
h
e
r


w
i
t
h
 
o
n
e
 
u
n
i
n
t
e
r
r
u
p
t
e
d
 
c
a
l
l
;
 
t
h
e
 
s
p
l
i
t
 
r
u
n
 
m
u
s
t
 
m
a
t
c
h
 
t
h
e
 
u
n
i
n
t
e
r
r
u
p
t
e
d
 
o
n
e


s
t
e
p
 
f
o
r
 
s
t
e
p
,
 
a
n
d
 
t
h
e
 
l
o
s
s
-
s
c
a
l
e
 
t
r
a
j
e
c
t
o
r
y
 
m
u
s
t
 
m
a
t
c
h


`
p
o
l
i
c
y
_
r
e
f
e
r
e
n
c
e
.
e
x
p
o
n
e
n
t
i
a
l
_
p
o
l
i
c
y
`
 
f
e
d
 
w
i
t
h
 
t
h
e
 
o
b
s
e
r
v
e
d
 
f
i
n
i
t
e
 
f
l
a
g
s
.




E
s
t
i
m
a
t
o
r
 
s
h
i
p
s
 
w
i
t
h
 
T
e
n
s
o
r
F
l
o
w
 
o
n
l
y
 
u
p
 
t
o
 
2
.
1
5
 
(
`
t
e
n
s
o
r
f
l
o
w
_
e
s
t
i
m
a
t
o
r
`
)
;


e
l
s
e
w
h
e
r
e
 
t
h
e
s
e
 
t
e
s
t
s
 
a
r
e
 
s
k
i
p
p
e
d
.


"
"
"




i
m
p
o
r
t
 
i
m
p
o
r
t
l
i
b
.
u
t
i
l


i
m
p
o
r
t
 
j
s
o
n


i
m
p
o
r
t
 
o
s


i
m
p
o
r
t
 
s
u
b
p
r
o
c
e
s
s


i
m
p
o
r
t
 
s
y
s


i
m
p
o
r
t
 
t
e
m
p
f
i
l
e




f
r
o
m
 
a
b
s
l
.
t
e
s
t
i
n
g
 
i
m
p
o
r
t
 
p
a
r
a
m
e
t
e
r
i
z
e
d


i
m
p
o
r
t
 
t
e
n
s
o
r
f
l
o
w
 
a
s
 
t
f




i
m
p
o
r
t
 
c
o
n
t
r
i
b
_
m
i
x
e
d
_
p
r
e
c
i
s
i
o
n


i
m
p
o
r
t
 
p
o
l
i
c
y
_
r
e
f
e
r
e
n
c
e




_
P
R
O
G
R
A
M
 
=
 
o
s
.
p
a
t
h
.
j
o
i
n
(
o
s
.
p
a
t
h
.
d
i
r
n
a
m
e
(
o
s
.
p
a
t
h
.
a
b
s
p
a
t
h
(
_
_
f
i
l
e
_
_
)
)
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
"
p
r
o
g
r
a
m
s
"
,
 
"
e
s
t
i
m
a
t
o
r
_
t
r
a
i
n
.
p
y
"
)


_
S
T
E
P
S
 
=
 
1
0


_
M
A
N
A
G
E
R
_
A
R
G
S
 
=
 
d
i
c
t
(
i
n
i
t
_
l
o
s
s
_
s
c
a
l
e
=
2
*
*
1
8
,
 
i
n
c
r
_
e
v
e
r
y
_
n
_
s
t
e
p
s
=
3
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
d
e
c
r
_
e
v
e
r
y
_
n
_
n
a
n
_
o
r
_
i
n
f
=
2
,
 
i
n
c
r
_
r
a
t
i
o
=
2
,
 
d
e
c
r
_
r
a
t
i
o
=
0
.
5
)


_
S
T
A
T
E
_
K
E
Y
S
 
=
 
(
"
s
t
e
p
"
,
 
"
f
i
n
i
t
e
"
,
 
"
l
o
s
s
_
s
c
a
l
e
"
,
 
"
g
o
o
d
_
s
t
e
p
s
"
,
 
"
b
a
d
_
s
t
e
p
s
"
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
"
g
l
o
b
a
l
_
s
t
e
p
"
)


_
H
A
S
_
E
S
T
I
M
A
T
O
R
 
=
 
i
m
p
o
r
t
l
i
b
.
u
t
i
l
.
f
i
n
d
_
s
p
e
c
(
"
t
e
n
s
o
r
f
l
o
w
_
e
s
t
i
m
a
t
o
r
"
)
 
i
s
 
n
o
t
 
N
o
n
e


_
N
O
_
E
S
T
I
M
A
T
O
R
 
=
 
(


 
 
 
 
"
t
e
n
s
o
r
f
l
o
w
_
e
s
t
i
m
a
t
o
r
 
i
s
 
n
o
t
 
i
n
s
t
a
l
l
e
d
:
 
t
f
.
e
s
t
i
m
a
t
o
r
 
e
x
i
s
t
s
 
o
n
l
y
 
u
p
 
t
o
 
"


 
 
 
 
"
T
F
 
2
.
1
5
,
 
a
n
d
 
t
h
i
s
 
i
s
 
T
F
 
{
}
.
"
.
f
o
r
m
a
t
(
t
f
.
_
_
v
e
r
s
i
o
n
_
_
)
)


_
r
e
s
u
l
t
s
 
=
 
{
}






d
e
f
 
_
t
r
a
i
n
(
m
a
n
a
g
e
r
,
 
d
i
s
t
r
i
b
u
t
e
=
"
n
o
n
e
"
)
:


 
 
k
e
y
 
=
 
(
m
a
n
a
g
e
r
,
 
d
i
s
t
r
i
b
u
t
e
)


 
 
i
f
 
k
e
y
 
n
o
t
 
i
n
 
_
r
e
s
u
l
t
s
:


 
 
 
 
o
u
t
 
=
 
o
s
.
p
a
t
h
.
j
o
i
n
(
t
e
m
p
f
i
l
e
.
m
k
d
t
e
m
p
(
)
,
 
"
e
s
t
i
m
a
t
o
r
.
j
s
o
n
"
)


 
 
 
 
e
n
v
 
=
 
d
i
c
t
(
o
s
.
e
n
v
i
r
o
n
)


 
 
 
 
p
a
c
k
a
g
e
_
r
o
o
t
 
=
 
o
s
.
p
a
t
h
.
d
i
r
n
a
m
e
(


 
 
 
 
 
 
 
 
o
s
.
p
a
t
h
.
d
i
r
n
a
m
e
(
o
s
.
p
a
t
h
.
a
b
s
p
a
t
h
(
c
o
n
t
r
i
b
_
m
i
x
e
d
_
p
r
e
c
i
s
i
o
n
.
_
_
f
i
l
e
_
_
)
)
)


 
 
 
 
e
n
v
[
"
P
Y
T
H
O
N
P
A
T
H
"
]
 
=
 
o
s
.
p
a
t
h
s
e
p
.
j
o
i
n
(


 
 
 
 
 
 
 
 
p
 
f
o
r
 
p
 
i
n
 
(
p
a
c
k
a
g
e
_
r
o
o
t
,
 
e
n
v
.
g
e
t
(
"
P
Y
T
H
O
N
P
A
T
H
"
)
)
 
i
f
 
p
)


 
 
 
 
e
n
v
.
s
e
t
d
e
f
a
u
l
t
(
"
T
F
_
C
P
P
_
M
I
N
_
L
O
G
_
L
E
V
E
L
"
,
 
"
2
"
)


 
 
 
 
p
r
o
c
 
=
 
s
u
b
p
r
o
c
e
s
s
.
r
u
n
(


 
 
 
 
 
 
 
 
[
s
y
s
.
e
x
e
c
u
t
a
b
l
e
,
 
_
P
R
O
G
R
A
M
,
 
"
-
-
o
u
t
"
,
 
o
u
t
,
 
"
-
-
m
a
n
a
g
e
r
"
,
 
m
a
n
a
g
e
r
,


 
 
 
 
 
 
 
 
 
"
-
-
d
i
s
t
r
i
b
u
t
e
"
,
 
d
i
s
t
r
i
b
u
t
e
,
 
"
-
-
s
t
e
p
s
"
,
 
s
t
r
(
_
S
T
E
P
S
)
]
,


 
 
 
 
 
 
 
 
e
n
v
=
e
n
v
,
 
s
t
d
o
u
t
=
s
u
b
p
r
o
c
e
s
s
.
P
I
P
E
,
 
s
t
d
e
r
r
=
s
u
b
p
r
o
c
e
s
s
.
S
T
D
O
U
T
,


 
 
 
 
 
 
 
 
t
i
m
e
o
u
t
=
3
0
0
,
 
c
h
e
c
k
=
F
a
l
s
e
)


 
 
 
 
i
f
 
p
r
o
c
.
r
e
t
u
r
n
c
o
d
e
 
!
=
 
0
:


 
 
 
 
 
 
r
a
i
s
e
 
A
s
s
e
r
t
i
o
n
E
r
r
o
r
(
"
e
s
t
i
m
a
t
o
r
_
t
r
a
i
n
.
p
y
 
f
a
i
l
e
d
 
(
{
}
)
:
\
n
{
}
"
.
f
o
r
m
a
t
(


 
 
 
 
 
 
 
 
 
 
p
r
o
c
.
r
e
t
u
r
n
c
o
d
e
,
 
p
r
o
c
.
s
t
d
o
u
t
.
d
e
c
o
d
e
(
"
u
t
f
-
8
"
,
 
"
r
e
p
l
a
c
e
"
)
[
-
6
0
0
0
:
]
)
)


 
 
 
 
w
i
t
h
 
o
p
e
n
(
o
u
t
)
 
a
s
 
f
:


 
 
 
 
 
 
_
r
e
s
u
l
t
s
[
k
e
y
]
 
=
 
j
s
o
n
.
l
o
a
d
(
f
)


 
 
r
e
t
u
r
n
 
_
r
e
s
u
l
t
s
[
k
e
y
]






@
p
a
r
a
m
e
t
e
r
i
z
e
d
.
n
a
m
e
d
_
p
a
r
a
m
e
t
e
r
s
(
(
"
m
a
n
a
g
e
r
_
i
n
s
i
d
e
_
m
o
d
e
l
_
f
n
"
,
 
"
i
n
s
i
d
e
"
)
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
(
"
m
a
n
a
g
e
r
_
s
h
a
r
e
d
_
a
c
r
o
s
s
_
t
r
a
i
n
_
c
a
l
l
s
"
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
"
o
u
t
s
i
d
e
"
)
)


c
l
a
s
s
 
E
s
t
i
m
a
t
o
r
T
r
a
i
n
i
n
g
T
e
s
t
(
t
f
.
t
e
s
t
.
T
e
s
t
C
a
s
e
,
 
p
a
r
a
m
e
t
e
r
i
z
e
d
.
T
e
s
t
C
a
s
e
)
:




 
 
d
e
f
 
s
e
t
U
p
(
s
e
l
f
)
:


 
 
 
 
s
u
p
e
r
(
)
.
s
e
t
U
p
(
)


 
 
 
 
i
f
 
n
o
t
 
_
H
A
S
_
E
S
T
I
M
A
T
O
R
:


 
 
 
 
 
 
s
e
l
f
.
s
k
i
p
T
e
s
t
(
_
N
O
_
E
S
T
I
M
A
T
O
R
)




 
 
d
e
f
 
t
e
s
t
_
s
e
c
o
n
d
_
t
r
a
i
n
_
c
a
l
l
_
c
o
n
t
i
n
u
e
s
_
f
r
o
m
_
c
h
e
c
k
p
o
i
n
t
(
s
e
l
f
,
 
m
a
n
a
g
e
r
)
:


 
 
 
 
f
i
r
s
t
,
 
s
e
c
o
n
d
 
=
 
_
t
r
a
i
n
(
m
a
n
a
g
e
r
)
[
"
s
p
l
i
t
"
]


 
 
 
 
s
a
v
e
d
 
=
 
f
i
r
s
t
[
"
c
h
e
c
k
p
o
i
n
t
"
]


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
s
a
v
e
d
[
"
g
l
o
b
a
l
_
s
t
e
p
"
]
,
 
_
S
T
E
P
S
)


 
 
 
 
l
a
s
t
 
=
 
f
i
r
s
t
[
"
r
e
c
o
r
d
s
"
]
[
-
1
]


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(


 
 
 
 
 
 
 
 
[
s
a
v
e
d
[
"
l
o
s
s
_
s
c
a
l
e
"
]
,
 
s
a
v
e
d
[
"
g
o
o
d
_
s
t
e
p
s
"
]
,
 
s
a
v
e
d
[
"
b
a
d
_
s
t
e
p
s
"
]
]
,


 
 
 
 
 
 
 
 
[
l
a
s
t
[
"
l
o
s
s
_
s
c
a
l
e
"
]
,
 
l
a
s
t
[
"
g
o
o
d
_
s
t
e
p
s
"
]
,
 
l
a
s
t
[
"
b
a
d
_
s
t
e
p
s
"
]
]
)


 
 
 
 
#
 
T
h
e
 
s
e
c
o
n
d
 
c
a
l
l
'
s
 
f
i
r
s
t
 
s
t
e
p
 
s
t
a
r
t
s
 
f
r
o
m
 
t
h
e
 
s
a
v
e
d
 
s
t
a
t
e
:
 
i
t
s


 
 
 
 
#
 
c
o
u
n
t
e
r
s
 
m
o
v
e
d
 
o
n
 
b
y
 
e
x
a
c
t
l
y
 
o
n
e
 
s
t
e
p
.


 
 
 
 
n
x
t
 
=
 
s
e
c
o
n
d
[
"
r
e
c
o
r
d
s
"
]
[
0
]


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
n
x
t
[
"
s
t
e
p
"
]
,
 
_
S
T
E
P
S
)


 
 
 
 
e
x
p
e
c
t
e
d
 
=
 
p
o
l
i
c
y
_
r
e
f
e
r
e
n
c
e
.
e
x
p
o
n
e
n
t
i
a
l
_
p
o
l
i
c
y
(


 
 
 
 
 
 
 
 
[
n
x
t
[
"
f
i
n
i
t
e
"
]
]
,
 
i
n
i
t
_
l
o
s
s
_
s
c
a
l
e
=
s
a
v
e
d
[
"
l
o
s
s
_
s
c
a
l
e
"
]
,


 
 
 
 
 
 
 
 
i
n
c
r
_
e
v
e
r
y
_
n
_
s
t
e
p
s
=
3
,
 
d
e
c
r
_
e
v
e
r
y
_
n
_
n
a
n
_
o
r
_
i
n
f
=
2
,
 
i
n
c
r
_
r
a
t
i
o
=
2
,


 
 
 
 
 
 
 
 
d
e
c
r
_
r
a
t
i
o
=
0
.
5
,
 
g
o
o
d
=
s
a
v
e
d
[
"
g
o
o
d
_
s
t
e
p
s
"
]
,
 
b
a
d
=
s
a
v
e
d
[
"
b
a
d
_
s
t
e
p
s
"
]
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(


 
 
 
 
 
 
 
 
[
(
n
x
t
[
"
l
o
s
s
_
s
c
a
l
e
"
]
,
 
n
x
t
[
"
g
o
o
d
_
s
t
e
p
s
"
]
,
 
n
x
t
[
"
b
a
d
_
s
t
e
p
s
"
]
)
]
,
 
e
x
p
e
c
t
e
d
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
s
e
c
o
n
d
[
"
c
h
e
c
k
p
o
i
n
t
"
]
[
"
g
l
o
b
a
l
_
s
t
e
p
"
]
,
 
2
 
*
 
_
S
T
E
P
S
)




 
 
d
e
f
 
t
e
s
t
_
s
p
l
i
t
_
t
r
a
i
n
i
n
g
_
e
q
u
a
l
s
_
u
n
i
n
t
e
r
r
u
p
t
e
d
(
s
e
l
f
,
 
m
a
n
a
g
e
r
)
:


 
 
 
 
r
e
s
u
l
t
 
=
 
_
t
r
a
i
n
(
m
a
n
a
g
e
r
)


 
 
 
 
s
p
l
i
t
 
=
 
[
r
 
f
o
r
 
r
u
n
 
i
n
 
r
e
s
u
l
t
[
"
s
p
l
i
t
"
]
 
f
o
r
 
r
 
i
n
 
r
u
n
[
"
r
e
c
o
r
d
s
"
]
]


 
 
 
 
(
w
h
o
l
e
,
)
 
=
 
r
e
s
u
l
t
[
"
w
h
o
l
e
"
]


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
[
[
r
[
k
]
 
f
o
r
 
k
 
i
n
 
_
S
T
A
T
E
_
K
E
Y
S
]
 
f
o
r
 
r
 
i
n
 
s
p
l
i
t
]
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
[
[
r
[
k
]
 
f
o
r
 
k
 
i
n
 
_
S
T
A
T
E
_
K
E
Y
S
]
 
f
o
r
 
r
 
i
n
 
w
h
o
l
e
[
"
r
e
c
o
r
d
s
"
]
]
)


 
 
 
 
f
o
r
 
a
,
 
b
 
i
n
 
z
i
p
(
s
p
l
i
t
,
 
w
h
o
l
e
[
"
r
e
c
o
r
d
s
"
]
)
:


 
 
 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
A
l
l
C
l
o
s
e
(
a
[
"
w
"
]
,
 
b
[
"
w
"
]
,
 
r
t
o
l
=
1
e
-
6
)


 
 
 
 
f
i
n
a
l
_
s
p
l
i
t
 
=
 
d
i
c
t
(
r
e
s
u
l
t
[
"
s
p
l
i
t
"
]
[
-
1
]
[
"
c
h
e
c
k
p
o
i
n
t
"
]
)


 
 
 
 
f
i
n
a
l
_
w
h
o
l
e
 
=
 
d
i
c
t
(
w
h
o
l
e
[
"
c
h
e
c
k
p
o
i
n
t
"
]
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
A
l
l
C
l
o
s
e
(
f
i
n
a
l
_
s
p
l
i
t
.
p
o
p
(
"
m
o
d
e
l
/
w
"
)
,
 
f
i
n
a
l
_
w
h
o
l
e
.
p
o
p
(
"
m
o
d
e
l
/
w
"
)
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
r
t
o
l
=
1
e
-
6
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
f
i
n
a
l
_
s
p
l
i
t
,
 
f
i
n
a
l
_
w
h
o
l
e
)




 
 
d
e
f
 
t
e
s
t
_
t
r
a
j
e
c
t
o
r
y
_
m
a
t
c
h
e
s
_
r
e
f
e
r
e
n
c
e
_
p
o
l
i
c
y
(
s
e
l
f
,
 
m
a
n
a
g
e
r
)
:


 
 
 
 
(
w
h
o
l
e
,
)
 
=
 
_
t
r
a
i
n
(
m
a
n
a
g
e
r
)
[
"
w
h
o
l
e
"
]


 
 
 
 
r
e
c
o
r
d
s
 
=
 
w
h
o
l
e
[
"
r
e
c
o
r
d
s
"
]


 
 
 
 
f
l
a
g
s
 
=
 
[
r
[
"
f
i
n
i
t
e
"
]
 
f
o
r
 
r
 
i
n
 
r
e
c
o
r
d
s
]


 
 
 
 
e
x
p
e
c
t
e
d
 
=
 
p
o
l
i
c
y
_
r
e
f
e
r
e
n
c
e
.
e
x
p
o
n
e
n
t
i
a
l
_
p
o
l
i
c
y
(
f
l
a
g
s
,
 
*
*
_
M
A
N
A
G
E
R
_
A
R
G
S
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(


 
 
 
 
 
 
 
 
[
(
r
[
"
l
o
s
s
_
s
c
a
l
e
"
]
,
 
r
[
"
g
o
o
d
_
s
t
e
p
s
"
]
,
 
r
[
"
b
a
d
_
s
t
e
p
s
"
]
)
 
f
o
r
 
r
 
i
n
 
r
e
c
o
r
d
s
]
,


 
 
 
 
 
 
 
 
e
x
p
e
c
t
e
d
)


 
 
 
 
#
 
2
*
*
1
8
 
o
v
e
r
f
l
o
w
s
 
f
l
o
a
t
1
6
 
f
i
r
s
t
;
 
l
a
t
e
r
 
t
h
e
 
s
c
a
l
e
 
g
r
o
w
s
 
b
a
c
k
 
i
n
t
o


 
 
 
 
#
 
o
v
e
r
f
l
o
w
,
 
s
o
 
s
k
i
p
s
 
h
a
p
p
e
n
 
i
n
 
t
h
e
 
m
i
d
d
l
e
 
t
o
o
.


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
F
a
l
s
e
(
f
l
a
g
s
[
0
]
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
I
n
(
F
a
l
s
e
,
 
f
l
a
g
s
[
f
l
a
g
s
.
i
n
d
e
x
(
T
r
u
e
)
:
]
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
r
e
c
o
r
d
s
[
-
1
]
[
"
g
l
o
b
a
l
_
s
t
e
p
"
]
,
 
s
u
m
(
f
l
a
g
s
)
)




 
 
d
e
f
 
t
e
s
t
_
c
h
e
c
k
p
o
i
n
t
_
n
a
m
e
s
_
a
n
d
_
d
t
y
p
e
s
(
s
e
l
f
,
 
m
a
n
a
g
e
r
)
:


 
 
 
 
(
w
h
o
l
e
,
)
 
=
 
_
t
r
a
i
n
(
m
a
n
a
g
e
r
)
[
"
w
h
o
l
e
"
]


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
w
h
o
l
e
[
"
c
h
e
c
k
p
o
i
n
t
"
]
[
"
d
t
y
p
e
s
"
]
,
 
{


 
 
 
 
 
 
 
 
"
m
o
d
e
l
/
w
"
:
 
"
f
l
o
a
t
3
2
"
,
 
"
m
o
d
e
l
/
w
/
A
d
a
m
"
:
 
"
f
l
o
a
t
3
2
"
,


 
 
 
 
 
 
 
 
"
m
o
d
e
l
/
w
/
A
d
a
m
_
1
"
:
 
"
f
l
o
a
t
3
2
"
,
 
"
c
o
n
d
/
b
e
t
a
1
_
p
o
w
e
r
"
:
 
"
f
l
o
a
t
3
2
"
,


 
 
 
 
 
 
 
 
"
c
o
n
d
/
b
e
t
a
2
_
p
o
w
e
r
"
:
 
"
f
l
o
a
t
3
2
"
,
 
"
g
l
o
b
a
l
_
s
t
e
p
"
:
 
"
i
n
t
6
4
"
,


 
 
 
 
 
 
 
 
"
l
o
s
s
_
s
c
a
l
e
"
:
 
"
f
l
o
a
t
3
2
"
,
 
"
g
o
o
d
_
s
t
e
p
s
"
:
 
"
i
n
t
3
2
"
,


 
 
 
 
 
 
 
 
"
b
a
d
_
s
t
e
p
s
"
:
 
"
i
n
t
3
2
"
}
)






c
l
a
s
s
 
E
s
t
i
m
a
t
o
r
M
i
r
r
o
r
e
d
T
e
s
t
(
t
f
.
t
e
s
t
.
T
e
s
t
C
a
s
e
)
:


 
 
"
"
"
`
t
r
a
i
n
_
d
i
s
t
r
i
b
u
t
e
=
M
i
r
r
o
r
e
d
S
t
r
a
t
e
g
y
`
 
o
v
e
r
 
t
w
o
 
l
o
g
i
c
a
l
 
C
P
U
s
.
"
"
"




 
 
d
e
f
 
s
e
t
U
p
(
s
e
l
f
)
:


 
 
 
 
s
u
p
e
r
(
)
.
s
e
t
U
p
(
)


 
 
 
 
i
f
 
n
o
t
 
_
H
A
S
_
E
S
T
I
M
A
T
O
R
:


 
 
 
 
 
 
s
e
l
f
.
s
k
i
p
T
e
s
t
(
_
N
O
_
E
S
T
I
M
A
T
O
R
)


 
 
 
 
i
f
 
o
s
.
e
n
v
i
r
o
n
.
g
e
t
(
"
C
M
P
_
E
S
T
I
M
A
T
O
R
_
M
I
R
R
O
R
E
D
"
)
 
!
=
 
"
1
"
:


 
 
 
 
 
 
#
 
O
p
e
n
 
p
r
o
b
l
e
m
:
 
o
n
 
t
h
e
 
2
-
c
o
r
e
 
d
e
v
 
m
a
c
h
i
n
e
 
t
h
e
 
p
r
o
g
r
a
m
'
s
 
f
i
r
s
t


 
 
 
 
 
 
#
 
s
e
s
s
i
o
n
.
r
u
n
 
h
a
n
g
s
 
(
n
o
 
C
P
U
 
u
s
e
d
)
 
e
v
e
n
 
w
i
t
h


 
 
 
 
 
 
#
 
i
n
t
e
r
_
o
p
_
p
a
r
a
l
l
e
l
i
s
m
_
t
h
r
e
a
d
s
=
8
 
a
n
d
 
d
e
v
i
c
e
_
c
o
u
n
t
=
{
'
C
P
U
'
:
 
2
}
.


 
 
 
 
 
 
s
e
l
f
.
s
k
i
p
T
e
s
t
(
"
s
e
t
 
C
M
P
_
E
S
T
I
M
A
T
O
R
_
M
I
R
R
O
R
E
D
=
1
:
 
t
h
e
 
E
s
t
i
m
a
t
o
r
 
+
 
"


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
"
M
i
r
r
o
r
e
d
S
t
r
a
t
e
g
y
 
p
r
o
g
r
a
m
 
h
a
n
g
s
 
i
n
 
i
t
s
 
f
i
r
s
t
 
"


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
"
s
e
s
s
i
o
n
.
r
u
n
 
o
n
 
2
-
c
o
r
e
 
m
a
c
h
i
n
e
s
 
(
u
n
d
e
r
 
i
n
v
e
s
t
i
g
a
t
i
o
n
)
.
"
)




 
 
d
e
f
 
t
e
s
t
_
s
p
l
i
t
_
t
r
a
i
n
i
n
g
_
e
q
u
a
l
s
_
u
n
i
n
t
e
r
r
u
p
t
e
d
(
s
e
l
f
)
:


 
 
 
 
r
e
s
u
l
t
 
=
 
_
t
r
a
i
n
(
"
i
n
s
i
d
e
"
,
 
"
m
i
r
r
o
r
e
d
"
)


 
 
 
 
s
p
l
i
t
 
=
 
[
r
 
f
o
r
 
r
u
n
 
i
n
 
r
e
s
u
l
t
[
"
s
p
l
i
t
"
]
 
f
o
r
 
r
 
i
n
 
r
u
n
[
"
r
e
c
o
r
d
s
"
]
]


 
 
 
 
(
w
h
o
l
e
,
)
 
=
 
r
e
s
u
l
t
[
"
w
h
o
l
e
"
]


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
[
[
r
[
k
]
 
f
o
r
 
k
 
i
n
 
_
S
T
A
T
E
_
K
E
Y
S
]
 
f
o
r
 
r
 
i
n
 
s
p
l
i
t
]
,


 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
 
[
[
r
[
k
]
 
f
o
r
 
k
 
i
n
 
_
S
T
A
T
E
_
K
E
Y
S
]
 
f
o
r
 
r
 
i
n
 
w
h
o
l
e
[
"
r
e
c
o
r
d
s
"
]
]
)


 
 
 
 
f
l
a
g
s
 
=
 
[
r
[
"
f
i
n
i
t
e
"
]
 
f
o
r
 
r
 
i
n
 
w
h
o
l
e
[
"
r
e
c
o
r
d
s
"
]
]


 
 
 
 
e
x
p
e
c
t
e
d
 
=
 
p
o
l
i
c
y
_
r
e
f
e
r
e
n
c
e
.
e
x
p
o
n
e
n
t
i
a
l
_
p
o
l
i
c
y
(
f
l
a
g
s
,
 
*
*
_
M
A
N
A
G
E
R
_
A
R
G
S
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(


 
 
 
 
 
 
 
 
[
(
r
[
"
l
o
s
s
_
s
c
a
l
e
"
]
,
 
r
[
"
g
o
o
d
_
s
t
e
p
s
"
]
,
 
r
[
"
b
a
d
_
s
t
e
p
s
"
]
)


 
 
 
 
 
 
 
 
 
f
o
r
 
r
 
i
n
 
w
h
o
l
e
[
"
r
e
c
o
r
d
s
"
]
]
,
 
e
x
p
e
c
t
e
d
)


 
 
 
 
s
e
l
f
.
a
s
s
e
r
t
E
q
u
a
l
(
w
h
o
l
e
[
"
c
h
e
c
k
p
o
i
n
t
"
]
[
"
g
l
o
b
a
l
_
s
t
e
p
"
]
,
 
2
 
*
 
_
S
T
E
P
S
)






i
f
 
_
_
n
a
m
e
_
_
 
=
=
 
"
_
_
m
a
i
n
_
_
"
:


 
 
t
f
.
t
e
s
t
.
m
a
i
n
(
)


