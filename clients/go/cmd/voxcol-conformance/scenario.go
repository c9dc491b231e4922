package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	voxcol "github.com/voxcol/voxcol/clients/go"
	v1 "github.com/voxcol/voxcol/clients/go/voxcolv1"
)

// stepTimeout bounds one step, so that a scenario waiting for something that never comes
// (a Subscribe `take` beyond the feed) ends with DEADLINE_EXCEEDED instead of hanging.
const stepTimeout = 60 * time.Second

// scenario is a scenario file; fields the runner does not need (float_tolerance, ignore)
// are read by compare.py.
type scenario struct {
	Name   string `json:"name"`
	Secure bool   `json:"secure"`
	Steps  []step `json:"steps"`
}

type step struct {
	Call     string            `json:"call"`
	Request  json.RawMessage   `json:"request"`
	Requests []json.RawMessage `json:"requests"`
	Take     int               `json:"take"`
}

// result is one output line.
type result struct {
	Scenario  string            `json:"scenario"`
	Step      int               `json:"step"`
	Call      string            `json:"call"`
	Code      *codes.Code       `json:"code,omitempty"`
	Message   *string           `json:"message,omitempty"`
	Responses []json.RawMessage `json:"responses"`
	Skipped   string            `json:"skipped,omitempty"`
}

type runner struct {
	target, secureTarget, caFile, token string
}

func (r *runner) run(scenarioFile, outFile string) error {
	data, err := os.ReadFile(scenarioFile)
	if err != nil {
		return err
	}
	var sc scenario
	if err := json.Unmarshal(data, &sc); err != nil {
		return fmt.Errorf("%s: %w", scenarioFile, err)
	}
	client, err := r.dial(sc.Secure)
	if err != nil {
		return err
	}
	defer client.Close()

	f, err := os.Create(outFile)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i, st := range sc.Steps {
		res, err := runStep(client, st)
		if err != nil {
			f.Close()
			return fmt.Errorf("%s step %d (%s): %w", sc.Name, i, st.Call, err)
		}
		res.Scenario, res.Step, res.Call = sc.Name, i, st.Call
		if err := enc.Encode(res); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// dial connects the way the scenario asks: plaintext, or TLS with the test CA and the token.
func (r *runner) dial(secure bool) (*voxcol.Client, error) {
	if !secure {
		return voxcol.Dial(r.target, voxcol.WithTimeout(stepTimeout))
	}
	if r.secureTarget == "" || r.caFile == "" || r.token == "" {
		return nil, errors.New("a secure scenario needs --secure_target, --ca and --token")
	}
	ca, err := os.ReadFile(r.caFile)
	if err != nil {
		return nil, err
	}
	return voxcol.Dial(r.secureTarget, voxcol.WithTLS(ca), voxcol.WithToken(r.token), voxcol.WithTimeout(stepTimeout))
}

// runStep makes one step's call. The error is the runner's own (a malformed request), not
// the call's: that one is in the result.
func runStep(c *voxcol.Client, st step) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	switch st.Call {
	case "QueryService.Query":
		return queryStep(ctx, c, st.Requests)
	case "EditService.EditStream":
		return editStreamStep(ctx, c, st.Requests)
	case "EditService.Subscribe":
		return subscribeStep(ctx, c, st.Request, st.Take)
	case "QueryService.WatchPaths":
		return watchPathsStep(ctx, c, st.Requests)
	}
	call, ok := unaryCalls(c)[st.Call]
	if !ok {
		return &result{Skipped: "unknown call " + st.Call}, nil
	}
	resp, err := call(ctx, st.Request)
	if errors.Is(err, errBadRequest) {
		return nil, err
	}
	res := finish(err)
	if err == nil {
		if err := res.add(resp); err != nil {
			return nil, err
		}
	}
	return res, nil
}

var errBadRequest = errors.New("bad request in the scenario")

// parse reads a step's proto3 JSON into msg.
func parse(raw json.RawMessage, msg proto.Message) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := protojson.Unmarshal(raw, msg); err != nil {
		return fmt.Errorf("%w: %v", errBadRequest, err)
	}
	return nil
}

// finish returns a result holding err's code and message.
func finish(err error) *result {
	code, message := voxcol.Code(err), ""
	var e *voxcol.Error
	if errors.As(err, &e) {
		message = e.Message
	} else if err != nil {
		message = err.Error()
	}
	return &result{Code: &code, Message: &message, Responses: []json.RawMessage{}}
}

func (r *result) add(msg proto.Message) error {
	data, err := protojson.Marshal(msg)
	if err != nil {
		return err
	}
	r.Responses = append(r.Responses, data)
	return nil
}

// queryStep sends every request as one batch through the library's Batcher, then closes it
// (half-close, wait for the answers) and reports the stream's status.
func queryStep(ctx context.Context, c *voxcol.Client, raws []json.RawMessage) (*result, error) {
	b := c.NewBatcher(voxcol.BatcherOptions{})
	futures := make([]*voxcol.BatchFuture, 0, len(raws))
	for _, raw := range raws {
		var req v1.QueryBatchRequest
		if err := parse(raw, &req); err != nil {
			b.Close(ctx)
			return nil, err
		}
		futures = append(futures, b.Send(&req))
	}
	var responses []*v1.QueryBatchResponse
	var streamErr error
	for _, f := range futures {
		a, err := f.Wait(ctx)
		if a != nil && a.Response != nil {
			responses = append(responses, a.Response) // answered, perhaps with a batch-level code
		} else if err != nil && streamErr == nil {
			streamErr = err // no answer: the stream failed
		}
	}
	if err := b.Close(ctx); err != nil {
		streamErr = err
	}
	res := finish(streamErr)
	for _, resp := range responses {
		if err := res.add(resp); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// watchPathsStep sends every request on one WatchPaths stream, half-closes and reads every event.
func watchPathsStep(ctx context.Context, c *voxcol.Client, raws []json.RawMessage) (*result, error) {
	reqs := make([]*v1.WatchPathsRequest, len(raws))
	for i, raw := range raws {
		reqs[i] = &v1.WatchPathsRequest{}
		if err := parse(raw, reqs[i]); err != nil {
			return nil, err
		}
	}
	ws, err := c.WatchPaths(ctx)
	if err != nil {
		return finish(err), nil
	}
	for _, req := range reqs {
		if ws.Send(req) != nil {
			break // Recv reports why the stream ended
		}
	}
	_ = ws.CloseSend()
	var responses []*v1.WatchPathsResponse
	for {
		resp, err := ws.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			res := finish(err)
			for _, r := range responses {
				if err := res.add(r); err != nil {
					return nil, err
				}
			}
			return res, nil
		}
		responses = append(responses, resp)
	}
}

// editStreamStep sends every request on one EditStream, half-closes and reads every response.
func editStreamStep(ctx context.Context, c *voxcol.Client, raws []json.RawMessage) (*result, error) {
	reqs := make([]*v1.EditStreamRequest, len(raws))
	for i, raw := range raws {
		reqs[i] = &v1.EditStreamRequest{}
		if err := parse(raw, reqs[i]); err != nil {
			return nil, err
		}
	}
	es, err := c.EditStream(ctx)
	if err != nil {
		return finish(err), nil
	}
	defer es.Close()
	var sendErr error
	for _, req := range reqs {
		if sendErr = es.Send(req); sendErr != nil {
			break // Recv reports why the stream ended
		}
	}
	if sendErr == nil {
		sendErr = es.CloseSend()
	}
	var responses []*v1.EditStreamResponse
	for {
		resp, err := es.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			res := finish(err)
			for _, r := range responses {
				if err := res.add(r); err != nil {
					return nil, err
				}
			}
			return res, nil
		}
		responses = append(responses, resp)
	}
}

// subscribeStep reads `take` changes and cancels the feed.
func subscribeStep(ctx context.Context, c *voxcol.Client, raw json.RawMessage, take int) (*result, error) {
	var req v1.SubscribeRequest
	if err := parse(raw, &req); err != nil {
		return nil, err
	}
	sub, err := c.Subscribe(ctx, &req)
	if err != nil {
		return finish(err), nil
	}
	defer sub.Close()
	var responses []*v1.SubscribeResponse
	var recvErr error
	for len(responses) < take {
		resp, err := sub.Recv()
		if err != nil {
			recvErr = err
			break
		}
		responses = append(responses, resp)
	}
	res := finish(recvErr)
	for _, r := range responses {
		if err := res.add(r); err != nil {
			return nil, err
		}
	}
	return res, nil
}
